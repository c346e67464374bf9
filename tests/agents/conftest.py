"""The finished runs the ecosystem's tools play, built once per test module."""

from __future__ import annotations

import pytest

from agents import custom_train, sb3_train
from agents.session.cli import run_cli
from tests.helpers import SHORT


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A finished run of each trainer: SB3's DQN on UAVGrid, ours on BallDuel pixels."""
    folder = tmp_path_factory.mktemp("runs")
    assert run_cli(sb3_train.main, ["--env", "UAVGrid-v0", "--n-envs", "2", *SHORT, "--log-dir", str(folder)]) == 0
    duel = ["--env", "BallDuel-v0", "--n-envs", "2", "--env-kwargs", "max_episode_steps=60"]
    assert run_cli(custom_train.main, [*duel, *SHORT, "--log-dir", str(folder)]) == 0
    return {"dqn": folder / "dqn" / "UAVGrid-v0_1", "custom": folder / "custom" / "BallDuel-v0_1"}
