"""agents.environments: our SB3 adapter of the native vector envs, and the steps our own learners
read from them, each against stable-baselines3's DummyVecEnv over the same envs."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from agents.artifacts.runs import read_config
from agents.environments.envs import make_vec
from agents.environments.steps import NativeSteps, StackedSteps, make_steps
from agents.session.cli import run_cli


def assert_same_obs(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    else:
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


ADAPTER_CONFIGS = [
    ("BallDuel-v0", {"obs_type": "state", "opponent": "random", "max_episode_steps": 40}, None),
    ("BallDuel-v0", {"obs_type": "pixels", "max_episode_steps": 30}, 4),
    ("UAVGrid-v0", {"max_episode_steps": 25}, None),
    ("UAVGridImage-v0", {"max_episode_steps": 20, "random_start": True}, 2),
]


@pytest.mark.parametrize(
    "env_id,kwargs,frame_stack", ADAPTER_CONFIGS, ids=[c[0] + ("-stacked" if c[2] else "") for c in ADAPTER_CONFIGS]
)
def test_sb3_adapter_matches_dummy_vec_env(env_id, kwargs, frame_stack):
    n, steps = 3, 90
    native = make_vec(env_id, kwargs, n, seed=5, vec_env="native", frame_stack=frame_stack)
    dummy = make_vec(env_id, kwargs, n, seed=5, vec_env="dummy", frame_stack=frame_stack)
    assert native.observation_space == dummy.observation_space
    assert_same_obs(native.reset(), dummy.reset())
    actions = np.random.default_rng(1).integers(9, size=(steps, n))
    endings = 0
    for t in range(steps):
        obs_n, rew_n, done_n, infos_n = native.step(actions[t])
        obs_d, rew_d, done_d, infos_d = dummy.step(actions[t])
        assert_same_obs(obs_n, obs_d)
        np.testing.assert_array_equal(rew_n, rew_d)
        np.testing.assert_array_equal(done_n, done_d)
        for info_n, info_d in zip(infos_n, infos_d):
            assert info_n["TimeLimit.truncated"] == info_d["TimeLimit.truncated"]
            assert ("terminal_observation" in info_n) == ("terminal_observation" in info_d)
            if "terminal_observation" in info_d:
                assert_same_obs(info_n["terminal_observation"], info_d["terminal_observation"])
                assert (
                    info_n["episode"]["r"] == pytest.approx(info_d["episode"]["r"])
                    and info_n["episode"]["l"] == info_d["episode"]["l"]
                )
                endings += 1
    assert endings >= n
    native.close()
    dummy.close()


@pytest.mark.parametrize(
    "env_id,kwargs,frame_stack",
    [
        ("BallDuel-v0", {"obs_type": "state", "opponent": "random", "max_episode_steps": 40}, None),
        ("UAVGrid-v0", {"max_episode_steps": 25}, None),
        # Pixels stacked natively against SB3's VecFrameStack + VecTransposeImage, resets included.
        ("BallDuel-v0", {"opponent": "random", "max_episode_steps": 30}, 4),
        ("BallDuel-v0", {"obs_type": "state", "opponent": "chaser", "max_episode_steps": 20}, 3),
        # A teacher's view (distill, kickstart): the games' states, a finished env's those of its next game.
        ("UAVGridImage-v0", {"state_info": True, "max_episode_steps": 30}, None),
        ("BallSumo-v0", {"state_info": True, "opponent": "chaser", "obs_size": 36}, 2),
    ],
)
def test_custom_agent_reads_the_native_env_directly_as_through_dummy_vec_env(env_id, kwargs, frame_stack):
    n, steps = 3, 90
    native = make_steps(env_id, kwargs, n, 5, "native", frame_stack)
    dummy = make_steps(env_id, kwargs, n, 5, "dummy", frame_stack)
    assert isinstance(native, StackedSteps if frame_stack else NativeSteps)
    assert native.observation_space == dummy.observation_space
    assert_same_obs(native.reset(), dummy.reset())
    if kwargs.get("state_info"):
        np.testing.assert_array_equal(native.reset_info["state"], dummy.reset_info["state"])
    actions = np.random.default_rng(1).integers(9, size=(steps, n))
    episodes = 0
    for t in range(steps):
        a, b = native.step(actions[t]), dummy.step(actions[t])
        if kwargs.get("state_info"):
            np.testing.assert_array_equal(a.info["state"], b.info["state"])
        for field in ("observations", "next_observations"):
            assert_same_obs(getattr(a, field), getattr(b, field))
        for field in ("rewards", "terminated", "ended"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-6)
        assert len(a.episodes) == len(b.episodes)
        for (return_a, length_a), (return_b, length_b) in zip(a.episodes, b.episodes):
            assert return_a == pytest.approx(return_b, abs=1e-5) and length_a == length_b
        episodes += len(a.episodes)
    assert episodes >= n
    native.close()
    dummy.close()


@pytest.mark.parametrize("trainer_name", ["sb3_train", "custom_train"])
def test_trainers_run_on_the_native_vector_env(tmp_path, trainer_name):
    trainer = importlib.import_module(f"agents.{trainer_name}")
    argv = [
        "--env", "UAVGrid-v0", "--timesteps", "800", "--n-envs", "8", "--vec-env", "native", "--log-dir", str(tmp_path),
        "--hyperparams", "buffer_size=1000", "learning_starts=200", "--env-kwargs", "max_episode_steps=50",
        "--save-freq", "400", "--eval-freq", "400", "--eval-episodes", "1", "--no-progress",
    ]  # fmt: skip
    assert run_cli(trainer.main, argv) == 0
    run_dir = next((tmp_path).glob("*/UAVGrid-v0_1"))
    assert read_config(run_dir)["vec_env"] == "native"
    assert list(run_dir.glob("final_model.*")) and list(run_dir.glob("checkpoints/model_*"))
    episodes = (run_dir / "native.monitor.csv").read_text().splitlines()[2:]
    assert len(episodes) >= 8 and all(line.split(",")[1] == "50" for line in episodes)
