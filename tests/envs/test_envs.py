"""What every registered environment owes its users, parametrised over ids and observation types."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import ballenvs

try:  # stable-baselines3's checker too, where the agents extra is installed: the env tests need only the core
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
except ImportError:
    sb3_check_env = None

#: Every registered id as registered, and variants with other observations and rules.
CONFIGS = [(env_id, {}) for env_id in ballenvs.ENV_IDS] + [
    ("BallDuel-v0", {"obs_type": "state"}),
    ("BallDuel-v0", {"obs_type": "state", "opponent": "random"}),
    ("UAVGrid-v0", {"obs_type": "image", "random_layout": True, "random_start": True}),
]
IDS = [f"{env_id}-{'-'.join(map(str, kwargs.values()))}".rstrip("-") for env_id, kwargs in CONFIGS]


def test_every_id_is_registered():
    assert set(ballenvs.ENV_IDS) <= set(gym.registry)


@pytest.mark.parametrize("env_id,kwargs", CONFIGS, ids=IDS)
def test_checkers_pass_without_warnings(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped, skip_render_check=True)
        if sb3_check_env is not None:
            sb3_check_env(env.unwrapped, warn=True)


def rollout(env_id, kwargs, seed, steps=300):
    env = gym.make(env_id, **kwargs)
    env.action_space.seed(123)
    obs, info = env.reset(seed=seed)
    trajectory = [(obs, info)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        trajectory.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            trajectory.append(env.reset())
    return trajectory


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


@pytest.mark.parametrize("env_id,kwargs", CONFIGS, ids=IDS)
def test_same_seed_same_trajectory_other_seed_differs(env_id, kwargs):
    first = rollout(env_id, kwargs, seed=7)
    assert same(first, rollout(env_id, kwargs, seed=7))
    assert not same(first, rollout(env_id, kwargs, seed=8))


@pytest.mark.parametrize("env_id,kwargs", CONFIGS, ids=IDS)
def test_observations_stay_in_space(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    for _ in range(2000):
        assert env.observation_space.contains(obs), obs
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_rgb_array_render(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert frame.shape[0] >= 200 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 2
    env.close()
    env.close()  # closing twice is safe


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_human_render_smoke(env_id):
    env = gym.make(env_id, render_mode="human")
    env.reset(seed=0)
    for _ in range(3):
        assert env.step(env.action_space.sample())[0] is not None
    env.close()
    env.close()


@pytest.mark.filterwarnings("ignore:.*render_mode='movie'")
@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_unknown_render_mode_is_rejected(env_id):
    with pytest.raises(ValueError, match="'movie'.*'human'.*'rgb_array'"):
        gym.make(env_id, render_mode="movie")


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_no_render_mode_never_imports_pygame_nor_torch(env_id):
    out = run_python(
        "import sys, gymnasium as gym, ballenvs\n"
        f"env = gym.make({env_id!r})\n"
        "env.reset(seed=0)\n"
        "for _ in range(50):\n"
        "    if any(env.step(env.action_space.sample())[2:4]): env.reset()\n"
        "env.close()\n"
        "print(sorted(m for m in ('pygame', 'torch', 'stable_baselines3') if m in sys.modules))"
    )
    assert out.strip() == "[]"


def test_reimport_registers_without_override_warning():
    out = run_python(
        "import importlib, warnings\nwarnings.simplefilter('error')\nimport ballenvs\nimportlib.reload(ballenvs)\nprint('ok')"
    )
    assert out.strip() == "ok"


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_module_prefixed_id_works_in_fresh_process(env_id):
    # The fresh interpreter never imports ballenvs itself: "ballenvs:" must do it, as it
    # does for SubprocVecEnv workers.
    out = run_python(
        "import sys, gymnasium as gym\n"
        f"env = gym.make('ballenvs:{env_id}')\n"
        "obs, _ = env.reset(seed=0)\n"
        "obs, *_ = env.step(env.action_space.sample())\n"
        "print(env.observation_space.contains(obs), 'ballenvs' in sys.modules)"
    )
    assert out.split() == ["True", "True"]


@pytest.mark.parametrize("env_id,kwargs", CONFIGS, ids=IDS)
def test_pickle_round_trip_keeps_state(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    env.reset(seed=3)
    for _ in range(5):
        env.step(1)
    clone = pickle.loads(pickle.dumps(env))
    assert same(env.step(2), clone.step(2))


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_pickle_and_deepcopy_after_render(env_id):
    import copy

    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=1)
    env.render()
    for make_clone in (lambda e: pickle.loads(pickle.dumps(e)), copy.deepcopy):
        clone = make_clone(env)
        assert same(env.step(0), clone.step(0))
        assert clone.render().shape == env.render().shape  # the clone draws on a canvas of its own


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_stepping_before_reset_or_after_the_end_is_refused(env_id):
    from gymnasium.error import ResetNeeded

    env = gym.make(env_id, max_episode_steps=-1).unwrapped.__class__(max_episode_steps=2)
    with pytest.raises(ResetNeeded, match="before the first reset"):
        env.step(0)
    env.reset(seed=0)
    env.step(0)
    assert env.step(0)[3]  # truncated at its own limit
    with pytest.raises(ResetNeeded, match="after the episode ended; call reset"):
        env.step(0)
    env.reset()
    env.step(0)


def test_info_values_keep_their_python_types():
    env = gym.make("UAVGrid-v0")
    _, info = env.reset(seed=0)
    types = {key: type(value) for key, value in info.items()}
    assert types == {"served": int, "served_weight": float, "episode_served": int, "episode_weight": float}
    for _ in range(300):
        info = env.step(env.action_space.sample())[4]
        assert {key: type(value) for key, value in info.items()} == types


def test_making_the_main_commands_env_warns_of_nothing_under_w_error():
    """Another project's test run under -W error::DeprecationWarning makes BallDuel-v0 and its vector env."""
    import subprocess
    import sys

    code = (
        "import gymnasium as gym, ballenvs\n"
        "gym.make('BallDuel-v0').reset(seed=0)\n"
        "gym.make('ballenvs:BallDuel-v0')\n"
        "gym.make_vec('BallDuel-v0', num_envs=2, vectorization_mode='vector_entry_point').reset(seed=0)\n"
        "gym.make('BallSumo-v0').reset(seed=0)\n"
    )
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_old_id_of_ballsumo_is_named_by_the_tools(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")  # the agents extra
    from agents import sb3_train
    from agents.session.cli import run_cli

    assert run_cli(sb3_train.main, ["--env", "BallDuel-v1", "--log-dir", str(tmp_path)]) == 2
    assert "BallDuel-v1 is now called BallSumo-v0" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
