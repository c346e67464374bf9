"""The documentation runs: every code block of README.md and the docs site (tests/contracts/docs_examples.py
says how each kind is run) and the quickstart notebook. The site's strict build is .ci/run's."""

from __future__ import annotations

import os
import subprocess
import sys

import nbclient
import nbformat
import pytest

from tests.contracts.docs_examples import NEEDS, PAGES, ROOT, blocks

#: Real processes, trainer runs and studies: the unit tier (-m "not slow") leaves them out.
pytestmark = pytest.mark.slow

PYTHON_BLOCKS = [block for page in PAGES for block in blocks(page) if block.lang == "python"]
PAGES_WITH_COMMANDS = [page for page in PAGES if any(block.lang == "bash" for block in blocks(page))]
RUNNABLE = ("python", "bash")


def test_every_code_block_is_python_or_bash_and_the_collector_finds_them():
    """Code is python or bash, so that it runs here; a ``text`` block is a listing (a folder tree)."""
    found = [block for page in PAGES for block in blocks(page)]
    assert len(found) >= 20, "the collector lost the blocks"
    others = [f"{block} ({block.lang or 'no language'})" for block in found if block.lang not in (*RUNNABLE, "text")]
    assert not others, f"blocks the tests cannot run: {others}"
    listings_with_commands = [
        str(block)
        for block in found
        if block.lang == "text" and any(line.startswith(("python ", "pip ")) for line in block.code.splitlines())
    ]
    assert not listings_with_commands, f"commands in text blocks, which do not run: {listings_with_commands}"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=str)
def test_python_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(block.code, str(block), "exec"), {"__name__": "__docs__"})


@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS, ids=lambda page: str(page.relative_to(ROOT)))
def test_page_commands_run(page, tmp_path):
    """A page's commands, in order, in one folder, with small budgets."""
    needed = NEEDS.get(page.relative_to(ROOT).as_posix())
    if needed is not None:
        pytest.importorskip(needed, reason=f"{page.name}'s commands run in CI's install of its extra (.ci/run)")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "contracts" / "docs_examples.py"), str(page)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_quickstart_notebook_runs(tmp_path, monkeypatch):
    notebook = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    assert "!pip install" in notebook.cells[1].source, "the first code cell installs the package in Colab"
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the kernel's, beside the tests
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    assert (tmp_path / "game.gif").stat().st_size > 0
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert any("image/gif" in output.get("data", {}) for output in outputs), "the game is shown inline"


def test_the_changelog_is_by_release_and_its_newest_is_the_packages_version():
    import re

    import ballenvs

    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## (\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2}), [0-9a-f]{7}\)$", text, flags=re.MULTILINE)
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings[0] == "Unreleased" and len(headings) == len(releases) + 1, "every other heading is a dated release"
    assert releases[0][0] == ballenvs.__version__
    versions = [tuple(map(int, version.split("."))) for version, _ in releases]
    assert versions == sorted(versions, reverse=True) and [d for _, d in releases] == sorted(
        (d for _, d in releases), reverse=True
    )


def test_the_results_page_answers_first_and_links_every_study():
    import re

    results = ROOT / "benchmarks" / "RESULTS.md"
    text = results.read_text()
    lines = text.splitlines()
    assert len(lines) <= 400, "the headline page stays short: the studies hold the rest"
    first_row = next(k for k, line in enumerate(lines) if line.startswith("| BallDuel-v0"))
    assert first_row < 40, "the table of what each section learns is on the first screen"
    linked = set(re.findall(r"\(studies/([^)#]+\.md)", text))
    studies = {page.name for page in (ROOT / "benchmarks" / "studies").glob("*.md")}
    assert studies == linked, f"studies RESULTS.md does not link: {sorted(studies - linked)}"
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md", name) for name in studies), "dated names"


def test_the_readme_names_every_algorithm_the_trainer_takes():
    from agents.common.configuration.registry import ALGORITHMS

    readme = (ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `python -m agents.train` |"))
    missing = [name for name in ALGORITHMS if f"`{name}`" not in row and f"`--algo {name}`" not in row]
    assert not missing, missing
