"""A student of pusher, a state model of BallSumo-v0 and a start to fine-tune, each trained once per module
that asks for it."""

from __future__ import annotations

import pytest

from tests.agents.algorithms.teaching import QUICK, STATE, SUMO, trained


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    return trained(tmp_path_factory.mktemp("student"), "distill", *QUICK, "--teacher", "pusher", "--timesteps", "400")


@pytest.fixture(scope="module")
def state_model(tmp_path_factory):
    """A state model of BallSumo-v0 (our DQN, a few hundred steps): a teacher with Q-values."""
    argv = [*SUMO, "--timesteps", "300", "--n-envs", "2", "--eval-freq", "0", "--no-progress"]
    argv += ["--env-kwargs", "obs_type=state", "opponent=chaser", "--hyperparams", "learning_starts=50", "buffer_size=500"]
    return trained(tmp_path_factory.mktemp("state"), "custom", *argv)


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A model that plays BallSumo-v0's state, to fine-tune: a short run of our DQN's section."""
    return trained(tmp_path_factory.mktemp("start"), "custom", *STATE, "--timesteps", "400", "--eval-freq", "0")
