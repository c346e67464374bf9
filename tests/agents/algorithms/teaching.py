"""What the tests of the learners with a teacher share: a short distill command line, the lean
network, pixel envs that report the state, games mid-play, a distill config."""

from __future__ import annotations

import csv

import numpy as np

from agents import train
from agents.algorithms.distill import DistillConfig
from agents.common.configuration.hyperparameters import TeacherGame
from agents.common.networks.lean_cnn import LeanCNN
from agents.environments.steps import make_steps
from agents.session.cli import run_cli
from ballenvs.duel.two_player_game import TwoPlayerDuel

SUMO = ["--env", "BallSumo-v0"]
LEAN = {"features_extractor_class": LeanCNN, "net_arch": []}
#: The shipped section, small: 4 envs, the cheap scripts as the pool, a tiny buffer.
QUICK = [*SUMO, "--n-envs", "4", "--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]
QUICK += ["--hyperparams", "buffer_size=2000", "learning_starts=64", "batch_size=32"]
QUICK += ["self_play=dict(scripted='chaser,pusher', scripted_share=0.5, snapshot_steps=200, swap_steps=100)"]
#: BallSumo-v0's state section (our DQN's, finetune's), small: the flags above, seed 1.
STATE = ["--seed", "1", *QUICK]


def stacked_env(n: int, seed: int = 0):
    """BallSumo-v0's sub-pixel frames, 4 stacked, against chaser, with the state in the info."""
    kwargs = {"obs_type": "pixels", "obs_size": 36, "subpixel": True, "state_info": True, "opponent": "chaser"}
    return make_steps("BallSumo-v0", kwargs, n, seed, "native", 4)


#: BallSumo-v0's rules as registered (the teacher plays under them).
SUMO_RULES = {"time_limit_rule": "nearer_centre", "game_steps": 100, "floor_slope": 0.6}


def sumo_game(n: int, seed: int = 0) -> TwoPlayerDuel:
    """BallSumo's rules mid-game: states a teacher has to read from both sides."""
    duel = TwoPlayerDuel(n, obs_type="state", **SUMO_RULES)
    rngs = [np.random.default_rng(seed + i) for i in range(n)]
    duel.reset(rngs)
    rng = np.random.default_rng(seed)
    for _ in range(10):
        duel.play(rng.integers(9, size=n), rng.integers(9, size=n))
    return duel


def config(teacher: str, **keys) -> DistillConfig:
    game = TeacherGame("BallSumo-v0", {"obs_type": "pixels", "obs_size": 36, "state_info": True, **keys.pop("env", {})})
    return DistillConfig(teacher=teacher, game=game, **keys)


def trained(folder, algo: str, *argv: str):
    """The run folder of ``agents.train --algo ALGO ARGV`` (ARGV naming BallSumo-v0), logged in ``folder``."""
    assert run_cli(train.main, ["--algo", algo, *argv, "--log-dir", str(folder)]) == 0
    return folder / algo / "BallSumo-v0_1"


def fine_tuned(folder, algo: str, start, *argv: str):
    """The run folder and progress rows of a short fine-tuning run from ``start`` (256 steps,
    evaluated every 128), checked to have evaluated its start before its first step and logged
    its pull."""
    flags = ["--timesteps", "256", "--eval-freq", "128", "--eval-episodes", "2"]
    run = trained(folder, algo, *argv, f"start_from={start}", *flags)
    with open(run / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    evaluated = [int(float(r["time/total_timesteps"])) for r in rows if r.get("eval/mean_reward")]
    assert evaluated == [0, 128, 256]  # the start's level first
    assert any(r.get("train/pull_weight") for r in rows)
    return run, rows
