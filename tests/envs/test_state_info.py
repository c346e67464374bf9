"""``state_info=True``: the duel's info carries the learner's side of the game exactly, from which
the observation obs_type="state" shows is made bit for bit (the teacher of a pixel student reads
it), in single and vector envs alike, and players act on it as on the game itself."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import ballenvs  # noqa: F401  (registers the ids)
from ballenvs.duel.observe import state_of_view
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.roster import make_player
from ballenvs.duel.two_player_game import TwoPlayerDuel
from ballenvs.reference import reference_for

PIXELS = {"obs_type": "pixels", "obs_size": 36, "subpixel": True}


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "BallSumo-v0"])
def test_the_single_envs_state_makes_the_state_envs_observation(env_id):
    arena = reference_for(env_id).arena
    env = gym.make(env_id, state_info=True, **PIXELS)
    state_env = gym.make(env_id, obs_type="state")
    _, info = env.reset(seed=3)
    observation, _ = state_env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert info["state"].dtype == np.float64 and info["state"].shape == (9 if env_id == "BallSumo-v0" else 8,)
        np.testing.assert_array_equal(arena.state_observation(info["state"][None], {})[0], observation)
        action = int(rng.integers(9))
        _, _, terminated, truncated, info = env.step(action)
        observation, *_ = state_env.step(action)
        if terminated or truncated:
            break


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "BallSumo-v0"])
@pytest.mark.parametrize("mode", [gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP])
def test_the_vector_envs_state_is_the_state_envs_and_sync_vector_envs(env_id, mode):
    """Across resets too: in SAME_STEP mode a finished game's row is its next episode's first state."""
    arena, n, limit = reference_for(env_id).arena, 6, {"max_episode_steps": 40}
    native = {"vectorization_mode": "vector_entry_point", "autoreset_mode": mode}
    env = gym.make_vec(env_id, n, **native, state_info=True, **limit, **PIXELS)
    sync = gym.make_vec(env_id, n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, state_info=True, **limit)
    state_env = gym.make_vec(env_id, n, **native, obs_type="state", **limit)
    _, info = env.reset(seed=1)
    _, sync_info = sync.reset(seed=1)
    observations, _ = state_env.reset(seed=1)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(120):
        np.testing.assert_array_equal(arena.state_observation(info["state"], {}), observations)
        np.testing.assert_array_equal(info["state"], sync_info["state"])
        np.testing.assert_array_equal(info["_state"], sync_info["_state"])
        actions = rng.integers(9, size=n)
        _, _, terminated, truncated, info = env.step(actions)
        _, _, _, _, sync_info = sync.step(actions)
        observations, *_ = state_env.step(actions)
        ends += int(np.count_nonzero(terminated | truncated))
    assert ends > n  # the check ran across many resets


def test_no_state_without_the_option_and_a_bad_value_is_refused():
    _, info = gym.make("BallSumo-v0").reset(seed=0)
    assert "state" not in info
    with pytest.raises(ValueError, match="state_info must be True or False, got 'yes'"):
        gym.make("BallSumo-v0", state_info="yes")


@pytest.mark.parametrize("side", [LEFT, RIGHT])
@pytest.mark.parametrize("name", ["chaser", "pusher", "sprinter", "planner"])
def test_a_player_acts_on_the_seat_of_the_state_as_on_the_game_from_either_side(name, side):
    options = {"time_limit_rule": "nearer_centre", "game_steps": 100, "floor_slope": 0.02}
    duel = TwoPlayerDuel(48, obs_type="state", **options)
    rngs = [np.random.default_rng(i) for i in range(48)]
    duel.reset(rngs)
    rng = np.random.default_rng(1)
    for _ in range(15):  # positions and speeds of games in progress
        duel.play(rng.integers(9, size=48), rng.integers(9, size=48))
    states = state_of_view(duel.view(side))
    seat = reference_for("BallSumo-v0").arena.state_seat(states, options, rng)
    for made, true in zip(seat.view, duel.view(side)):
        np.testing.assert_array_equal(made, true)
    player = make_player(name, duel.physics, duel.rules)
    np.testing.assert_array_equal(player.act(seat), player.act(duel.seat(side, rngs)))


def test_the_planners_values_choose_its_action():
    duel = TwoPlayerDuel(32, obs_type="state", time_limit_rule="nearer_centre", game_steps=100)
    rngs = [np.random.default_rng(i) for i in range(32)]
    duel.reset(rngs)
    planner = make_player("planner", duel.physics, duel.rules)
    actions, values = planner.act_with_values(duel.seat(LEFT, rngs))
    assert values.shape == (32, 9)
    np.testing.assert_array_equal(actions, planner.act(duel.seat(LEFT, rngs)))
    np.testing.assert_array_equal(values[np.arange(32), actions], values.max(axis=1))  # its action is a best one


def uav_rows(core) -> np.ndarray:
    s = core.state
    return np.concatenate([s.uav_x, s.uav_y, s.ue_x, s.ue_y, s.request, s.time_left], axis=1)


def test_the_uav_grids_state_is_its_core_exactly_and_makes_the_same_grids_back():
    from ballenvs.uav.physics import UAVCore

    native = {"vectorization_mode": "vector_entry_point", "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    env = gym.make_vec("UAVGridImage-v0", 5, **native, state_info=True, max_episode_steps=30)
    single = gym.make("UAVGridImage-v0", state_info=True, max_episode_steps=30)
    _, info = env.reset(seed=4)
    _, single_info = single.reset(seed=4)  # the vector env's first grid, reset as it is
    core = env.unwrapped.game.core
    rng = np.random.default_rng(0)
    for _ in range(70):  # across two resets
        rows = info["state"]
        assert rows.dtype == np.int64 and rows.shape == (5, 2 + 4 * core.params.n_ues)
        np.testing.assert_array_equal(rows, uav_rows(core))
        np.testing.assert_array_equal(rows[0], single_info["state"])
        back = UAVCore.of_rows(core.params, rows)
        for rebuilt, original in zip(back.state, core.state):
            np.testing.assert_array_equal(rebuilt, original)
        actions = rng.integers(9, size=5)
        _, _, _, _, info = env.step(actions)
        _, _, terminated, truncated, single_info = single.step(int(actions[0]))
        if terminated or truncated:
            _, single_info = single.reset()


def test_uavs_greedy_acts_on_the_state_as_on_the_grids_themselves():
    from ballenvs.uav.greedy import GreedyPolicy

    env = gym.make_vec("UAVGrid-v0", 8, vectorization_mode="vector_entry_point", state_info=True, max_episode_steps=100)
    act = reference_for("UAVGrid-v0").state_policies["greedy"]({})
    on_the_grids = GreedyPolicy(env)
    _, info = env.reset(seed=0)
    moved = 0
    for _ in range(250):
        actions = act(info["state"])
        np.testing.assert_array_equal(actions, on_the_grids.act())
        moved += int(np.count_nonzero(actions))
        _, _, _, _, info = env.step(actions)
    assert moved > 500  # it flew, not only waited


def test_uav_state_rows_of_another_grid_size_are_refused_naming_the_shape():
    from ballenvs.uav.physics import UAVCore, UAVParams

    with pytest.raises(ValueError, match=r"expected \(N, 42\) for n_ues=10, got \(3, 30\)"):
        UAVCore.of_rows(UAVParams(), np.zeros((3, 30), dtype=np.int64))
    _, info = gym.make("UAVGrid-v0").reset(seed=0)
    assert "state" not in info
    with pytest.raises(ValueError, match="state_info must be True or False, got 'true'"):
        gym.make("UAVGrid-v0", state_info="true")
