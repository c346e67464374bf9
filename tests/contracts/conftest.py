"""The runs the contracts' tables corrupt (each test copies one first, with ``copy_run``): tiny
but real runs of both trainers, built once per test module."""

from __future__ import annotations

import pytest

from agents import custom_train, sb3_train
from agents.session.cli import run_cli
from tests.helpers import TINY, UAV, train


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory):
    return train(sb3_train, tmp_path_factory.mktemp("sb3"), "--save-replay-buffer")


@pytest.fixture(scope="module")
def custom_run(tmp_path_factory):
    return train(custom_train, tmp_path_factory.mktemp("custom"), "--save-replay-buffer")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A custom self-play run on BallDuel (snapshots, a replay buffer) and an SB3 run on UAVGrid."""
    folder = tmp_path_factory.mktemp("runs")
    duel = ["--env", "BallDuel-v0", "--opponent", "self", "--env-kwargs", "obs_type=state", "max_episode_steps=60"]
    duel += ["--timesteps", "600", "--eval-freq", "0", "--no-progress", "--save-replay-buffer", "--log-dir", str(folder)]
    duel += ["--hyperparams", "policy=MlpPolicy", "frame_stack=1", "learning_starts=100", "buffer_size=2000"]
    duel += ["self_play=dict(snapshot_steps=200, swap_steps=100)"]
    assert run_cli(custom_train.main, duel) == 0
    uav = [*UAV, "--timesteps", "300", "--log-dir", str(folder), *TINY]
    assert run_cli(sb3_train.main, [*uav, "--eval-freq", "150", "--eval-episodes", "1", "--save-replay-buffer"]) == 0
    return {"custom": folder / "custom" / "BallDuel-v0_1", "dqn": folder / "dqn" / "UAVGrid-v0_1"}
