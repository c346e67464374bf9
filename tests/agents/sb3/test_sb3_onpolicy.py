"""stable-baselines3's PPO and A2C through our trainer (``--algo sb3_ppo``, ``sb3_a2c``): a
self-play run on the native vector env that writes SB3's own .zip (which SB3 loads alone),
snapshots its policy into the pool, evaluates, resumes, and plays as a gymnasium opponent; a
pixel run of A2C; what SB3 would find wrong only later refused in one line."""

from __future__ import annotations

import gymnasium as gym
import pytest

import ballenvs  # noqa: F401  (registers the ids)
from agents import load_player, train
from agents.common.configuration.registry import ALGORITHMS
from agents.evaluate import main as evaluate_main
from agents.session.cli import run_cli
from tests.helpers import refused

QUICK = ["--threads", "1", "--no-progress", "--save-freq", "0"]
#: BallSumo-v0's section, small: 4 envs x 64 steps, snapshots every 256 steps.
SUMO = ["--algo", "sb3_ppo", "--env", "BallSumo-v0", "--n-envs", "4", *QUICK, "--eval-freq", "512", "--eval-episodes", "2"]
SUMO += ["--hyperparams", "n_steps=64", "batch_size=64", "n_epochs=1"]
SUMO += ["self_play=dict(snapshot_steps=256, swap_steps=256, window=2, scripted_share=0.5, scripted='chaser,pusher')"]


def test_sb3_ppo_self_play_saves_sb3s_zip_snapshots_evaluates_resumes_and_plays_as_an_opponent(tmp_path, capsys):
    assert run_cli(train.main, [*SUMO, "--timesteps", "512", "--log-dir", str(tmp_path)]) == 0
    run = tmp_path / "sb3_ppo" / "BallSumo-v0_1"
    assert (run / "final_model.zip").is_file() and len(list((run / "snapshots").glob("*.pt"))) == 2
    from stable_baselines3 import PPO

    assert PPO.load(run / "final_model.zip", device="cpu").num_timesteps == 512  # SB3 alone reads it
    capsys.readouterr()
    assert run_cli(evaluate_main, [str(run), "--opponent", "chaser", "--episodes", "2"]) == 0
    assert "final_model.zip (sb3_ppo), greedy" in capsys.readouterr().out
    env = gym.make("BallSumo-v0", obs_type="state", opponent=load_player(run))
    env.reset(seed=0)
    assert env.observation_space.contains(env.step(0)[0])
    env.close()
    argv = ["--resume", str(run), "--timesteps", "256", "--log-dir", str(tmp_path), *QUICK]
    assert run_cli(train.main, argv) == 0
    assert "resume is not exact: stable-baselines3's PPO" in capsys.readouterr().err
    assert PPO.load(tmp_path / "sb3_ppo" / "BallSumo-v0_2" / "final_model.zip", device="cpu").num_timesteps == 768


def test_sb3_a2c_learns_from_the_duels_frames(tmp_path):
    argv = ["--algo", "sb3_a2c", "--env", "BallDuel-v0", "--n-envs", "2", *QUICK, "--eval-freq", "0"]
    assert run_cli(train.main, [*argv, "--timesteps", "40", "--log-dir", str(tmp_path)]) == 0
    from stable_baselines3 import A2C

    model = A2C.load(tmp_path / "sb3_a2c" / "BallDuel-v0_1" / "final_model.zip", device="cpu")
    assert model.observation_space.shape == (4, 36, 36) and model.num_timesteps == 40


@pytest.mark.parametrize("algo", ["sb3_ppo", "sb3_a2c"])
def test_every_env_id_has_a_section(algo):
    from agents.common.configuration.config_files import load_sections
    from ballenvs import ENV_IDS

    assert set(load_sections(ALGORITHMS[algo].config_path())) == set(ENV_IDS)


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["batch_size=1"], "batch_size (1) must each be at least 2"),
        (["policy_kwargs=dict(dueling=True)"], "policy_kwargs key(s) dueling not taken by sb3_ppo's policies"),
        (["clip_range=-1"], "clip_range"),
        (["n_steps=100000000000"], "n_steps=100000000000 x n_envs=8 needs about"),
    ],
)
def test_what_sb3_would_find_wrong_later_is_one_line_before_any_folder(tmp_path, capsys, flags, named):
    argv = ["--algo", "sb3_ppo", "--env", "BallSumo-v0", *QUICK, "--log-dir", str(tmp_path), "--hyperparams", *flags]
    assert named in refused(capsys, train.main, argv, tmp_path)
