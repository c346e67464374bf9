"""A student of pusher and a state model of BallSumo-v0, each trained once per module that asks for it."""

from __future__ import annotations

import pytest

from tests.agents.algorithms.teaching import QUICK, SUMO, trained


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    return trained(tmp_path_factory.mktemp("student"), "distill", *QUICK, "--teacher", "pusher", "--timesteps", "400")


@pytest.fixture(scope="module")
def state_model(tmp_path_factory):
    """A state model of BallSumo-v0 (our DQN, a few hundred steps): a teacher with Q-values."""
    argv = [*SUMO, "--timesteps", "300", "--n-envs", "2", "--eval-freq", "0", "--no-progress"]
    argv += ["--env-kwargs", "obs_type=state", "opponent=chaser", "--hyperparams", "learning_starts=50", "buffer_size=500"]
    return trained(tmp_path_factory.mktemp("state"), "custom", *argv)
