"""Native vector envs: gym.make_vec over the same core, env i == a single env seeded seed + i."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import ballenvs
import ballenvs.uav.game

CONFIGS = [
    ("BallDuel-v0", {"obs_type": "state", "opponent": "random"}),
    ("BallDuel-v0", {"obs_type": "pixels", "opponent": "chaser", "max_steps": 60}),
    ("BallDuel-v0", {"obs_type": "state", "opponent": "pusher", "shaping": 0.5}),
    ("UAVGrid-v0", {"max_steps": 40}),
    ("UAVGrid-v0", {"obs_type": "image", "random_layout": True, "random_start": True, "max_steps": 30}),
    ("UAVGridImage-v0", {"max_steps": 25}),
]
IDS = [f"{env_id}-{'-'.join(map(str, kwargs.values()))}" for env_id, kwargs in CONFIGS]


def index(obs, i):
    return {k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


def assert_same_obs(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("env_id,kwargs", CONFIGS, ids=IDS)
def test_env_i_replays_the_single_env_with_seed_plus_i(env_id, kwargs):
    assert_env_i_replays_single_env(env_id, kwargs)


def test_uav_requests_drawn_block_by_block_replay_alike(monkeypatch):
    # Blocks of 8 steps: every grid draws several blocks per episode, and its block runs out
    # exactly at the end of an episode, where the step that resets it must leave its generator alone.
    monkeypatch.setattr(ballenvs.uav.game, "MAX_BLOCK_STEPS", 8)
    assert_env_i_replays_single_env("UAVGrid-v0", {"max_steps": 40, "request_prob": 0.2})


def assert_env_i_replays_single_env(env_id, kwargs):
    n, seed, steps = 4, 11, 150
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    singles = [gym.make(env_id, **kwargs) for _ in range(n)]
    obs, _ = envs.reset(seed=seed)
    for i, single in enumerate(singles):
        assert_same_obs(index(obs, i), single.reset(seed=seed + i)[0])
    actions = np.random.default_rng(0).integers(9, size=(steps, n))
    single_done = [False] * n
    resets = 0
    for t in range(steps):
        obs, rewards, terminated, truncated, infos = envs.step(actions[t])
        for i, single in enumerate(singles):
            if single_done[i]:  # NEXT_STEP autoreset: this step reset env i, ignoring its action
                expected_obs, _ = single.reset()
                expected = (expected_obs, 0.0, False, False)
                resets += 1
            else:
                expected = single.step(int(actions[t, i]))[:4]
            assert_same_obs(index(obs, i), expected[0])
            assert (rewards[i], terminated[i], truncated[i]) == pytest.approx(expected[1:4], abs=0), (t, i)
            single_done[i] = bool(expected[2] or expected[3])
    assert resets > 0, "the comparison went across resets"


def test_vector_env_has_batched_spaces_and_metadata():
    envs = gym.make_vec("BallDuel-v0", num_envs=8, vectorization_mode="vector_entry_point")
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.single_observation_space.shape == (64, 64, 1)
    assert envs.observation_space.shape == (8, 64, 64, 1)
    assert envs.action_space.shape == (8,) and envs.single_action_space.n == 9
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)


def test_uav_uses_its_registered_vector_entry_point_by_default():
    envs = gym.make_vec("UAVGrid-v0", num_envs=3)
    assert type(envs.unwrapped).__name__ == "UAVGridVectorEnv"
    obs, info = envs.reset(seed=0)
    assert obs["pos"].shape == (3, 2) and obs["requests"].shape == (3, 10)
    assert info["episode_served"].tolist() == [0, 0, 0]


def test_same_step_autoreset_returns_final_observations():
    envs = gym.make_vec(
        "UAVGrid-v0", num_envs=2, vectorization_mode="vector_entry_point", max_steps=3, autoreset_mode="SameStep"
    )
    envs.reset(seed=0)
    for _ in range(2):
        _, _, _, truncated, info = envs.step(np.array([3, 3]))
        assert not truncated.any() and "final_obs" not in info
    obs, _, _, truncated, info = envs.step(np.array([3, 3]))
    assert truncated.all() and info["_final_obs"].all()
    assert np.allclose(info["final_obs"]["pos"][:, 0], (50 + 3 * 2) / 99)  # three steps east
    assert np.allclose(obs["pos"], 50 / 99)  # already reset to the centre


def test_vector_env_takes_the_same_options_and_errors():
    envs = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="still", obs_type="state")
    envs.reset(seed=0)
    assert envs.unwrapped.game.opponent.__class__.__name__ == "Still"
    with pytest.raises(ValueError, match="unknown opponent 'bully'"):
        gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="bully")
    with pytest.raises(ValueError, match="unknown UAVGrid option"):
        gym.make_vec("UAVGrid-v0", num_envs=2, coverage=3)
    with pytest.raises(ValueError, match=r"invalid actions .*valid: 2 ints in 0..8"):
        envs.step(np.array([0, 9]))
    with pytest.raises(ValueError, match=r"invalid actions"):
        envs.step(np.array([0]))


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_vector_env_renders_the_first_env(env_id):
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", render_mode="rgb_array")
    envs.reset(seed=0)
    envs.step(np.zeros(3, dtype=np.int64))
    frames = envs.render()
    assert len(frames) == 1 and frames[0].dtype == np.uint8 and frames[0].shape[2] == 3
    envs.close()
    human = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", render_mode="human")
    human.reset(seed=0)
    human.step(np.zeros(2, dtype=np.int64))
    human.close()


def test_reset_without_seed_continues_each_envs_generator():
    a = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_type="state", opponent="random")
    b = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_type="state", opponent="random")
    a.reset(seed=3)
    b.reset(seed=3)
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
    assert not np.array_equal(a.reset()[0], a.reset(seed=4)[0])


ADAPTER_CONFIGS = [
    ("BallDuel-v0", {"obs_type": "state", "opponent": "random", "max_steps": 40}, None),
    ("BallDuel-v0", {"obs_type": "pixels", "max_steps": 30}, 4),
    ("UAVGrid-v0", {"max_steps": 25}, None),
    ("UAVGridImage-v0", {"max_steps": 20, "random_start": True}, 2),
]


@pytest.mark.parametrize(
    "env_id,kwargs,frame_stack", ADAPTER_CONFIGS, ids=[c[0] + ("-stacked" if c[2] else "") for c in ADAPTER_CONFIGS]
)
def test_sb3_adapter_matches_dummy_vec_env(env_id, kwargs, frame_stack):
    from agents.envs import make_vec

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
    "env_id,kwargs",
    [("BallDuel-v0", {"obs_type": "state", "opponent": "random", "max_steps": 40}), ("UAVGrid-v0", {"max_steps": 25})],
)
def test_custom_agent_reads_the_native_env_directly_as_through_dummy_vec_env(env_id, kwargs):
    from agents.custom.collect import NativeSteps, make_steps

    n, steps = 3, 90
    native = make_steps(env_id, kwargs, n, 5, "native", None)
    dummy = make_steps(env_id, kwargs, n, 5, "dummy", None)
    assert isinstance(native, NativeSteps) and native.observation_space == dummy.observation_space
    assert_same_obs(native.reset(), dummy.reset())
    actions = np.random.default_rng(1).integers(9, size=(steps, n))
    episodes = 0
    for t in range(steps):
        a, b = native.step(actions[t]), dummy.step(actions[t])
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
    import importlib

    from agents.cli import run_cli
    from agents.runs import read_config

    trainer = importlib.import_module(f"agents.{trainer_name}")
    argv = [
        "--env", "UAVGrid-v0", "--timesteps", "800", "--n-envs", "8", "--vec-env", "native", "--log-dir", str(tmp_path),
        "--hyperparams", "buffer_size=1000", "learning_starts=200", "--env-kwargs", "max_steps=50",
        "--save-freq", "400", "--eval-freq", "400", "--eval-episodes", "1", "--no-progress",
    ]  # fmt: skip
    assert run_cli(trainer.main, argv) == 0
    run_dir = next((tmp_path).glob("*/UAVGrid-v0_1"))
    assert read_config(run_dir)["vec_env"] == "native"
    assert list(run_dir.glob("final_model.*")) and list(run_dir.glob("checkpoints/model_*"))
    episodes = (run_dir / "monitor" / "native.monitor.csv").read_text().splitlines()[2:]
    assert len(episodes) >= 8 and all(line.split(",")[1] == "50" for line in episodes)
