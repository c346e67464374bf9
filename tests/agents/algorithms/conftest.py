"""A student of pusher, trained once per module that asks for it."""

from __future__ import annotations

import pytest

from agents import train
from agents.common.session.cli import run_cli
from tests.agents.algorithms.teaching import QUICK


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    folder = tmp_path_factory.mktemp("student")
    argv = ["--algo", "distill", *QUICK, "--teacher", "pusher", "--timesteps", "400", "--log-dir", str(folder)]
    assert run_cli(train.main, argv) == 0
    return folder / "distill" / "BallSumo-v0_1"
