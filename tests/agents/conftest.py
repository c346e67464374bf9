"""The finished runs the ecosystem's tools play, built once a test session."""

from __future__ import annotations

import pytest

from agents import custom_train, sb3_train
from agents.session.cli import run_cli
from tests.helpers import SHORT, shared_run

#: The runs of the runs fixture, but their --log-dir: SB3's DQN on UAVGrid, ours on BallDuel pixels.
UAV_RUN = ["--env", "UAVGrid-v0", "--n-envs", "2", *SHORT]
DUEL_RUN = ["--env", "BallDuel-v0", "--n-envs", "2", "--env-kwargs", "max_episode_steps=60", *SHORT]


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """A finished run of each trainer: SB3's DQN on UAVGrid, ours on BallDuel pixels (once a session)."""

    def make(folder):
        assert run_cli(sb3_train.main, [*UAV_RUN, "--log-dir", str(folder)]) == 0
        assert run_cli(custom_train.main, [*DUEL_RUN, "--log-dir", str(folder)]) == 0
        return folder

    folder = shared_run(tmp_path_factory, "agents_runs", [*UAV_RUN, *DUEL_RUN], make)
    return {"dqn": folder / "dqn" / "UAVGrid-v0_1", "custom": folder / "custom" / "BallDuel-v0_1"}
