"""The runs the contracts' tables corrupt (each test copies one first, with ``copy_run``): tiny
but real runs of both trainers, built once a test session and shared by its workers."""

from __future__ import annotations

import pytest

from agents import custom_train, sb3_train
from agents.session.cli import run_cli
from tests.helpers import TINY, UAV, shared_run, train


@pytest.fixture(scope="session")
def sb3_run(tmp_path_factory):
    return shared_run(
        tmp_path_factory, "sb3_run", ["--save-replay-buffer"], lambda f: train(sb3_train, f, "--save-replay-buffer")
    )


@pytest.fixture(scope="session")
def custom_run(tmp_path_factory):
    return shared_run(
        tmp_path_factory, "custom_run", ["--save-replay-buffer"], lambda f: train(custom_train, f, "--save-replay-buffer")
    )


#: The runs of the runs fixture, but their --log-dir: a custom self-play run on BallDuel (snapshots, a
#: replay buffer) and an SB3 run on UAVGrid.
DUEL_SELF_PLAY = ["--env", "BallDuel-v0", "--opponent", "self", "--env-kwargs", "obs_type=state", "max_episode_steps=60"]
DUEL_SELF_PLAY += ["--timesteps", "600", "--eval-freq", "0", "--no-progress", "--save-replay-buffer"]
DUEL_SELF_PLAY += ["--hyperparams", "policy=MlpPolicy", "frame_stack=1", "learning_starts=100", "buffer_size=2000"]
DUEL_SELF_PLAY += ["self_play=dict(snapshot_steps=200, swap_steps=100)"]
UAV_EVALUATED = [*UAV, "--timesteps", "300", *TINY, "--eval-freq", "150", "--eval-episodes", "1", "--save-replay-buffer"]


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    def make(folder):
        assert run_cli(custom_train.main, [*DUEL_SELF_PLAY, "--log-dir", str(folder)]) == 0
        assert run_cli(sb3_train.main, [*UAV_EVALUATED, "--log-dir", str(folder)]) == 0
        return folder

    folder = shared_run(tmp_path_factory, "contracts_runs", [*DUEL_SELF_PLAY, *UAV_EVALUATED], make)
    return {"custom": folder / "custom" / "BallDuel-v0_1", "dqn": folder / "dqn" / "UAVGrid-v0_1"}
