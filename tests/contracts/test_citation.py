"""CITATION.cff: what a paper cites, for the version this checkout is."""

from __future__ import annotations

import yaml

import ballenvs
from tests.helpers import REPO


def test_the_citation_names_this_version_and_the_keys_cff_requires():
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["version"] == ballenvs.__version__
    assert {"message", "title", "authors"} <= set(citation) and citation["license"] == "MIT"
