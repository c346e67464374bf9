"""Native vector envs: the same core as the single envs, behaving exactly as gymnasium's SyncVectorEnv
over single envs (observations, rewards, flags and infos, in every autoreset mode), plus what
stable-baselines3 and the custom agent make of them."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import ballenvs
import ballenvs.uav.game

#: Every id with its defaults, and variants that exercise other rules and observations.
CONFIGS = [(env_id, {"max_episode_steps": 60}) for env_id in ballenvs.ENV_IDS] + [
    ("BallDuel-v0", {"obs_type": "state", "opponent": "random", "max_episode_steps": 40}),
    ("BallDuel-v0", {"obs_type": "state", "opponent": "pusher", "shaping": 0.5, "max_episode_steps": 80}),
    ("UAVGrid-v0", {"obs_type": "image", "random_layout": True, "random_start": True, "max_episode_steps": 30}),
]
IDS = [f"{env_id}-{'-'.join(map(str, kwargs.values()))}" for env_id, kwargs in CONFIGS]
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]


def native_and_sync(env_id, n, mode=AutoresetMode.NEXT_STEP, **kwargs):
    native = gym.make_vec(env_id, n, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(env_id, n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    return native, sync


def assert_same(native_result, sync_result, where=""):
    """Equal values of equal types, arrays of equal dtypes (gymnasium's own test of vector envs)."""
    for k, (a, b) in enumerate(zip(native_result, sync_result)):
        assert data_equivalence(a, b, exact=True), f"{where}: element {k} differs:\nnative {a}\nsync   {b}"


def without_wall_clock(result):
    """RecordEpisodeStatistics' episode times ("t") are wall-clock: everything else must match."""
    *rest, info = result
    if "episode" in info:
        info = info | {"episode": {k: v for k, v in info["episode"].items() if k != "t"}}
    return (*rest, info)


def run_side_by_side(native, sync, steps, seed=11):
    assert_same(native.reset(seed=seed), sync.reset(seed=seed), "reset")
    actions = np.random.default_rng(0).integers(9, size=(steps, native.num_envs))
    ended = 0
    for t in range(steps):
        result = native.step(actions[t])
        assert_same(without_wall_clock(result), without_wall_clock(sync.step(actions[t])), f"step {t}")
        ended += np.count_nonzero(result[2] | result[3])
    return ended


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("env_id,kwargs", CONFIGS, ids=IDS)
def test_native_vector_env_is_sync_vector_env(env_id, kwargs, mode):
    native, sync = native_and_sync(env_id, 4, mode, **kwargs)
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    assert native.metadata["autoreset_mode"] == mode
    assert run_side_by_side(native, sync, 150) >= 4, "the comparison went across episode ends"


def test_uav_requests_drawn_block_by_block_replay_alike(monkeypatch):
    # Blocks of 8 steps: every grid draws several blocks per episode, and its block runs out
    # exactly at the end of an episode, where the step that resets it must leave its generator alone.
    monkeypatch.setattr(ballenvs.uav.game, "REQUEST_BLOCK_STEPS", 8)
    for mode in MODES:
        native, sync = native_and_sync("UAVGrid-v0", 4, mode, max_episode_steps=40, request_prob=0.2)
        assert run_side_by_side(native, sync, 130) >= 4


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_disabled_autoreset_and_reset_mask_as_sync(env_id):
    native, sync = native_and_sync(
        env_id, 3, AutoresetMode.DISABLED, max_episode_steps=20, obs_type="state" if env_id == "BallDuel-v0" else "vector"
    )
    assert_same(native.reset(seed=4), sync.reset(seed=4), "reset")
    actions = np.random.default_rng(2).integers(9, size=(60, 3))
    resets = 0
    for t in range(60):
        result = native.step(actions[t])
        assert_same(result, sync.step(actions[t]), f"step {t}")
        ended = result[2] | result[3]
        if ended.any():
            options = {"reset_mask": ended}
            assert_same(native.reset(options=dict(options)), sync.reset(options=dict(options)), f"masked reset {t}")
            resets += 1
    assert resets >= 3


def test_disabled_autoreset_refuses_to_step_an_ended_env():
    envs = gym.make_vec(
        "UAVGrid-v0", 2, vectorization_mode="vector_entry_point", autoreset_mode="Disabled", max_episode_steps=2
    )
    envs.reset(seed=0)
    envs.step(np.array([0, 0]))
    envs.step(np.array([0, 0]))
    with pytest.raises(ResetNeeded, match=r"env\(s\) \[0, 1\] ended and autoreset_mode is Disabled"):
        envs.step(np.array([0, 0]))
    envs.reset(options={"reset_mask": np.array([True, True])})
    envs.step(np.array([0, 0]))


@pytest.mark.parametrize(
    "mask,error,message",
    [
        ([True, False], TypeError, "must be a numpy array"),
        (np.array([True]), ValueError, "must have shape"),
        (np.array([1, 0]), TypeError, "must have `dtype=np.bool_`"),
        (np.array([False, False]), ValueError, "at least one True value"),
    ],
)
def test_bad_reset_masks_fail_as_in_sync(mask, error, message):
    envs = gym.make_vec("UAVGrid-v0", 2, vectorization_mode="vector_entry_point")
    with pytest.raises(error, match=message):
        envs.reset(options={"reset_mask": mask})
    with pytest.raises(ValueError, match="no reset options besides reset_mask"):
        envs.reset(options={"layout_seed": 3})


def test_np_random_seed_gives_each_envs_seed_as_sync():
    native, sync = native_and_sync("BallDuel-v0", 3)
    native.reset(seed=42)
    sync.reset(seed=42)
    assert native.np_random_seed == sync.np_random_seed == (42, 43, 44)
    native.reset(seed=[7, None, 9])
    assert native.np_random_seed == (7, 43, 9)
    assert len(native.np_random) == 3 and all(isinstance(rng, np.random.Generator) for rng in native.np_random)


def test_reset_without_seed_continues_each_envs_generator():
    a = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_type="state", opponent="random")
    b = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_type="state", opponent="random")
    a.reset(seed=3)
    b.reset(seed=3)
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
    assert not np.array_equal(a.reset()[0], a.reset(seed=4)[0])


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_registered_time_limits(env_id):
    limit = gym.spec(env_id).max_episode_steps
    assert limit == {"BallDuel-v0": 1000, "BallSumo-v0": 101}.get(env_id, 300)  # BallSumo games end at 100, decided
    assert gym.make(env_id).spec.max_episode_steps == limit
    envs = gym.make_vec(env_id, 2)
    assert envs.unwrapped.max_episode_steps == limit and envs.spec.kwargs["max_episode_steps"] == limit
    gym.wrappers.TimeAwareObservation(gym.make(env_id))  # refuses envs without a time limit


@pytest.mark.parametrize("limit", [3, 1500])
@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_any_time_limit_gives_episodes_of_exactly_that_length(env_id, limit):
    kwargs = {"opponent": "still", "obs_type": "state"} if env_id == "BallDuel-v0" else {}
    single = gym.make(env_id, max_episode_steps=limit, **kwargs)
    envs = gym.make_vec(env_id, 2, max_episode_steps=limit, **kwargs)
    single.reset(seed=0)
    envs.reset(seed=0)
    for step in range(1, limit + 1):
        _, _, terminated, truncated, _ = single.step(0)
        _, _, vector_terminated, vector_truncated, _ = envs.step(np.zeros(2, dtype=np.int64))
        assert not terminated and not vector_terminated.any()  # a still ball in a still ring stays in
        assert truncated == (step == limit) and vector_truncated.tolist() == [step == limit] * 2


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_make_vec_from_its_own_spec_recreates_it(env_id):
    # gymnasium's tests/envs/registration/test_make_vec.py::test_make_vec_with_spec, on our ids.
    envs = gym.make_vec(env_id, num_envs=3, max_episode_steps=50)
    recreated = gym.make_vec(envs.spec)
    assert envs.spec == recreated.spec and type(envs) is type(recreated) and recreated.num_envs == 3
    assert envs.observation_space == recreated.observation_space and envs.action_space == recreated.action_space
    assert recreated.unwrapped.max_episode_steps == 50


def test_actions_of_the_wrong_type_are_a_type_error_wrong_values_a_value_error():
    envs = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    for bad_type in (0, np.int64(3), np.array([0.0, 1.0]), "01"):
        with pytest.raises(TypeError, match="actions must be a 1-D array of 2 ints"):
            envs.step(bad_type)
    for bad_value in (np.array([0, 9]), np.array([0]), np.array([-1, 0])):
        with pytest.raises(ValueError, match=r"invalid actions .*valid: 2 ints in 0..8"):
            envs.step(bad_value)


def test_step_before_reset_is_refused():
    envs = gym.make_vec("UAVGrid-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ResetNeeded, match="before the first reset"):
        envs.step(np.array([0, 0]))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_gymnasium_vector_wrappers_see_the_same_as_over_sync(env_id, mode):
    from gymnasium.wrappers.vector import DictInfoToList, NormalizeReward, RecordEpisodeStatistics

    kwargs = {"max_episode_steps": 25} | ({"obs_type": "state", "opponent": "random"} if env_id == "BallDuel-v0" else {})
    native, sync = native_and_sync(env_id, 3, mode, **kwargs)
    native, sync = (NormalizeReward(RecordEpisodeStatistics(env)) for env in (native, sync))
    assert run_side_by_side(native, sync, 80) >= 3
    native, sync = native_and_sync(env_id, 2, mode, **kwargs)
    native, sync = (DictInfoToList(env) for env in (native, sync))
    assert run_side_by_side(native, sync, 40) >= 2


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


def test_vector_env_takes_the_same_options_and_errors():
    envs = gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="still", obs_type="state")
    envs.reset(seed=0)
    assert envs.unwrapped.game.opponent.__class__.__name__ == "Still"
    with pytest.raises(ValueError, match="unknown opponent 'bully'"):
        gym.make_vec("BallDuel-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="bully")
    with pytest.raises(ValueError, match="unknown UAVGrid-v0 option"):
        gym.make_vec("UAVGrid-v0", num_envs=2, coverage=3)
    with pytest.raises(ValueError, match="unknown autoreset_mode 'Later'; valid: NextStep, SameStep, Disabled"):
        gym.make_vec("UAVGrid-v0", num_envs=2, autoreset_mode="Later")


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_vector_env_renders_every_env_as_sync_does(env_id):
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", render_mode="rgb_array")
    sync = gym.make_vec(env_id, num_envs=3, vectorization_mode="sync", render_mode="rgb_array")
    for vector in (envs, sync):
        vector.reset(seed=0)
        vector.step(np.zeros(3, dtype=np.int64))
    frames = envs.render()
    assert len(frames) == 3 and frames[0].dtype == np.uint8 and frames[0].shape[2] == 3
    assert all(np.array_equal(ours, theirs) for ours, theirs in zip(frames, sync.render()))
    envs.close()
    first = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", render_mode="rgb_array", render_envs=1)
    first.reset(seed=0)
    assert len(first.render()) == 1
    human = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", render_mode="human")
    human.reset(seed=0)
    human.step(np.zeros(2, dtype=np.int64))
    human.close()
