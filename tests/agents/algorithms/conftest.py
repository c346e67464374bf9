"""A student of pusher, a state model of BallSumo-v0 and a start to fine-tune, each trained once a
test session (shared by its workers) for the modules that ask for it."""

from __future__ import annotations

import pytest

from tests.agents.algorithms.teaching import QUICK, STATE, SUMO, trained
from tests.helpers import shared_run

STUDENT = [*QUICK, "--teacher", "pusher", "--timesteps", "400"]
#: A state model of BallSumo-v0 (our DQN, a few hundred steps): a teacher with Q-values.
STATE_MODEL = [*SUMO, "--timesteps", "300", "--n-envs", "2", "--eval-freq", "0", "--no-progress"]
STATE_MODEL += ["--env-kwargs", "obs_type=state", "opponent=chaser", "--hyperparams", "learning_starts=50", "buffer_size=500"]
#: A model that plays BallSumo-v0's state, to fine-tune: a short run of our DQN's section.
START = [*STATE, "--timesteps", "400", "--eval-freq", "0"]


def _shared(tmp_path_factory, name: str, algo: str, argv: list[str]):
    return shared_run(tmp_path_factory, name, [algo, *argv], lambda folder: trained(folder, algo, *argv))


@pytest.fixture(scope="session")
def student(tmp_path_factory):
    return _shared(tmp_path_factory, "student", "distill", STUDENT)


@pytest.fixture(scope="session")
def state_model(tmp_path_factory):
    return _shared(tmp_path_factory, "state_model", "custom", STATE_MODEL)


@pytest.fixture(scope="session")
def start(tmp_path_factory):
    return _shared(tmp_path_factory, "start", "custom", START)
