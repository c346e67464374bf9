"""A student of pusher and a state model of BallSumo-v0, each trained once per module that asks for it."""

from __future__ import annotations

import pytest

from agents import train
from agents.common.session.cli import run_cli
from tests.agents.algorithms.teaching import QUICK, SUMO


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    folder = tmp_path_factory.mktemp("student")
    argv = ["--algo", "distill", *QUICK, "--teacher", "pusher", "--timesteps", "400", "--log-dir", str(folder)]
    assert run_cli(train.main, argv) == 0
    return folder / "distill" / "BallSumo-v0_1"


@pytest.fixture(scope="module")
def state_model(tmp_path_factory):
    """A state model of BallSumo-v0 (our DQN, a few hundred steps): a teacher with Q-values."""
    folder = tmp_path_factory.mktemp("state")
    argv = [*SUMO, "--algo", "custom", "--timesteps", "300", "--n-envs", "2", "--eval-freq", "0", "--no-progress"]
    argv += ["--env-kwargs", "obs_type=state", "opponent=chaser", "--hyperparams", "learning_starts=50", "buffer_size=500"]
    assert run_cli(train.main, [*argv, "--log-dir", str(folder)]) == 0
    return folder / "custom" / "BallSumo-v0_1"
