"""The rules of UAVGrid-v0: moving, clamping, serving, expiry, time limit, observations, baselines."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import ballenvs  # noqa: F401
from ballenvs.uav import GreedyPolicy
from ballenvs.uav.physics import UAVState
from ballenvs.uav.reference import episode_returns

QUIET = {"request_prob": 0.0, "initial_request_prob": 0.0}  # no requests unless a test places them


def make(**kwargs):
    env = gym.make("UAVGrid-v0", **kwargs)
    env.reset(seed=0)
    return env


def place(env, uav=None, requests=None, time_left=None):
    """Set the UAV cell and some UEs' requests (dict ue -> class) and times by hand."""
    core = env.unwrapped.game.core
    s = core.state
    request, left = s.request.copy(), s.time_left.copy()
    for ue, cls in (requests or {}).items():
        request[ue] = cls
        left[ue] = (time_left or {}).get(ue, core.deadline_of[cls])
    uav_x, uav_y = uav if uav is not None else (s.uav_x, s.uav_y)
    core.state = UAVState(uav_x, uav_y, s.ue_x, s.ue_y, request, left)


def uav_cell(env):
    s = env.unwrapped.game.core.state
    return s.uav_x, s.uav_y


def test_uav_starts_at_the_centre_and_moves_speed_cells():
    env = make(**QUIET)
    assert uav_cell(env) == (50, 50)
    env.step(1)  # N
    assert uav_cell(env) == (50, 52)
    env.step(6)  # SW
    assert uav_cell(env) == (48, 50)
    env.step(0)
    assert uav_cell(env) == (48, 50)


@pytest.mark.parametrize(
    "start,action,end",
    [((0, 0), 6, (0, 0)), ((99, 99), 2, (99, 99)), ((1, 50), 7, (0, 50)), ((98, 0), 4, (99, 0))],
)
def test_moves_off_the_grid_are_clamped(start, action, end):
    env = make(**QUIET)
    place(env, uav=start)
    env.step(action)
    assert uav_cell(env) == end


def ue_at_offset(env, dx, dy):
    """Move the UAV so that UE 0 sits at (dx, dy) cells from it after a 'stay' step."""
    s = env.unwrapped.game.core.state
    return (int(s.ue_x[0]) - dx, int(s.ue_y[0]) - dy)


# A fixed layout looks coverage up in a table, a random one computes distances: both tested.
@pytest.mark.parametrize("random_layout", [False, True], ids=["fixed-layout", "random-layout"])
@pytest.mark.parametrize("dx,dy,served", [(0, 0, True), (8, 0, True), (0, -8, True), (6, 6, False), (9, 0, False)])
def test_serving_exactly_within_the_coverage_radius(dx, dy, served, random_layout):
    env = make(**QUIET, layout_seed=3, size=200, random_layout=random_layout)  # a big grid keeps the UAV clear of the edge
    place(env, uav=ue_at_offset(env, dx, dy), requests={0: 3})
    _, reward, _, _, info = env.step(0)
    assert info["served"] == int(served)
    assert reward == (1.0 if served else 0.0)  # class 3 carries the top weight, normalised to 1
    assert env.unwrapped.game.core.state.request[0] == (0 if served else 3)


def test_reward_sums_class_weights_and_charges_moves():
    env = make(**QUIET, move_cost=0.01)
    s = env.unwrapped.game.core.state
    # Park on UE 0 and give every UE in range a request of class 1 or 2.
    place(env, uav=(int(s.ue_x[0]), int(s.ue_y[0])), requests={0: 1})
    _, reward, _, _, info = env.step(0)
    assert reward == pytest.approx(0.25) and info["served_weight"] == pytest.approx(0.25)
    place(env, requests={0: 2})
    _, reward, _, _, info = env.step(0)
    assert reward == pytest.approx(0.5)
    assert info["episode_served"] == 2 and info["episode_weight"] == pytest.approx(0.75)
    _, reward, _, _, _ = env.step(1)
    assert reward == pytest.approx(-0.01)


def test_unserved_request_expires_after_its_time():
    env = make(**QUIET)
    place(env, uav=(0, 0) if env.unwrapped.game.core.state.ue_x[0] > 20 else (99, 99), requests={0: 2}, time_left={0: 3})
    requests = []
    for _ in range(4):
        obs, *_ = env.step(0)
        requests.append(int(obs["requests"][0]))
    assert requests == [2, 2, 0, 0]


def test_idle_users_raise_requests_with_the_class_mix():
    env = make(request_prob=1.0, initial_request_prob=0.0, coverage_radius=0.5, class_probs=(0.0, 0.0, 1.0), layout_seed=5)
    obs, *_ = env.step(0)
    assert set(obs["requests"].tolist()) <= {0, 3} and (obs["requests"] == 3).sum() >= 9


@pytest.mark.parametrize("max_episode_steps", [300, 5, 500])
def test_truncation_exactly_at_the_step_limit_and_never_terminated(max_episode_steps):
    env = make(**({} if max_episode_steps == 300 else {"max_episode_steps": max_episode_steps}))
    for step in range(1, max_episode_steps + 1):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        assert not terminated
        assert truncated == (step == max_episode_steps)


def test_vector_observation_is_position_and_requests():
    env = make(**QUIET)
    place(env, uav=(99, 0), requests={1: 2, 7: 1})
    obs, *_ = env.step(0)
    assert obs["pos"].dtype == np.float32 and np.allclose(obs["pos"], [1.0, 0.0])
    assert obs["requests"].tolist() == [0, 2, 0, 0, 0, 0, 0, 1, 0, 0]


def test_image_observation_is_a_channel_first_image_with_requests_and_edges():
    env = make(obs_type="image", **QUIET)
    space = env.observation_space
    preprocessing = pytest.importorskip("stable_baselines3.common.preprocessing")  # the agents extra
    assert (
        space.shape == (4, 64, 64)
        and preprocessing.is_image_space(space)
        and preprocessing.is_image_space_channels_first(space)
    )
    s = env.unwrapped.game.core.state
    place(env, uav=(50, 50), requests={4: 2})
    obs = env.unwrapped.game.observe()
    # The class-2 request is in channel 1, at its offset from the UAV: the picture spans 200 cells.
    row, col = int((50 - s.ue_y[4] + 100) * 64 / 200), int((s.ue_x[4] - 50 + 100) * 64 / 200)
    assert obs[1, row, col] == 255 and obs[0].max() == 0 and obs[2].max() == 0
    # From the centre, the grid fills the middle half of the picture; the rest is outside.
    assert obs[3, 32, 32] == 0 and obs[3, 0, 0] == 255 and obs[3, 32, 0] == 255 and obs[3, 63, 32] == 255


def test_channels_last_is_the_same_picture_with_its_channels_last_single_and_vector():
    first, last = gym.make("UAVGridImage-v0"), gym.make("UAVGridImage-v0", channels_last=True)
    assert last.observation_space == gym.spaces.Box(0, 255, (64, 64, 4), np.uint8)
    check_env(last.unwrapped, skip_render_check=True)
    pictures = [first.reset(seed=4)[0], last.reset(seed=4)[0]]
    for action in [3, 3, 5, 0, 8, 1] * 5:
        assert np.array_equal(np.moveaxis(pictures[0], 0, -1), pictures[1]) and pictures[0].any()
        pictures = [first.step(action)[0], last.step(action)[0]]
    vectors = [
        gym.make_vec("UAVGridImage-v0", 3, vectorization_mode="vector_entry_point", channels_last=cl) for cl in (False, True)
    ]
    batches = [vector.reset(seed=1)[0] for vector in vectors]
    assert batches[1].shape == (3, 64, 64, 4) and np.array_equal(np.moveaxis(batches[0], 1, -1), batches[1])


def test_layout_is_fixed_by_layout_seed_and_redrawn_with_random_layout():
    def layout(env):
        s = env.unwrapped.game.core.state
        return s.ue_x.tolist() + s.ue_y.tolist()

    assert layout(make(layout_seed=1)) == layout(make(layout_seed=1))
    assert layout(make(layout_seed=1)) != layout(make(layout_seed=2))
    env = make(random_layout=True, obs_type="image")
    first = layout(env)
    env.reset()
    assert layout(env) != first


def test_random_start():
    env = gym.make("UAVGrid-v0", random_start=True)
    starts = set()
    for seed in range(5):
        env.reset(seed=seed)
        starts.add(uav_cell(env))
    assert len(starts) == 5


def test_greedy_beats_random_and_stay():
    greedy = episode_returns("greedy", episodes=4)
    random = episode_returns("random", episodes=4)
    stay = episode_returns("stay", episodes=4)
    assert greedy.mean() > 2 * max(random.mean(), stay.mean(), 0.5)


def test_greedy_heads_for_a_waiting_request():
    env = make(**QUIET)
    s = env.unwrapped.game.core.state
    place(env, uav=(int(s.ue_x[0]) + 30, int(s.ue_y[0])), requests={0: 3})
    assert GreedyPolicy(env).act() == 7  # west, toward UE 0
    action, state = GreedyPolicy(env).predict(None)
    assert action == 7 and state is None


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"size": 1}, r"size must be an int in \[2, 100000\], got 1"),
        ({"n_ues": 0}, r"n_ues must be an int in \[1, 100000\], got 0"),
        ({"coverage_radius": 0}, "coverage_radius must be a finite positive number, got 0"),
        ({"coverage_radius": -2.0}, "coverage_radius must be a finite positive number, got -2.0"),
        ({"obs_type": "pixels"}, "obs_type 'pixels'.*'vector', 'image'"),
        ({"obs_type": "image", "obs_size": 20}, r"obs_size must be an int in \[36, 1024\], got 20"),
        ({"speed": 0}, "speed must be an int >= 1"),
        ({"class_probs": (0.5, 0.5, 0.5)}, "class_probs must be 3 non-negative numbers summing to 1"),
        ({"deadlines": (10, 0, 5)}, "deadlines must be 3 ints in 1..100000"),
        ({"class_weights": (1e999, 1, 1)}, "class_weights must be 3 finite positive numbers"),
        ({"random_layout": "false"}, "random_layout must be True or False, got 'false'"),
        ({"obs_size": 48}, "obs_size=48 applies to obs_type='image' only"),
        ({"channels_last": True}, "channels_last=True applies to obs_type='image' only"),
        ({"obs_type": "image", "channels_last": "yes"}, "channels_last must be True or False, got 'yes'"),
        ({"request_prob": 1.5}, r"request_prob must be in \[0, 1\], got 1.5"),
        ({"max_steps": 40}, "max_steps=40: the time limit is now gymnasium's max_episode_steps"),
        (
            {"coverage": 5},
            "unknown UAVGrid-v0 option.*'coverage'; valid: render_mode, max_episode_steps, obs_type, .*hotspot_spread",
        ),
    ],
)
def test_bad_options_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("UAVGrid-v0", **kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"size": 2}, {"size": 3, "n_hotspots": 2}, {"hotspot_spread": 1e6}, {"hotspot_spread": 0.0}]
)
def test_tiny_grids_and_any_spread_are_valid(kwargs):
    env = make(**kwargs)
    s = env.unwrapped.game.core.state
    size = kwargs.get("size", 100)
    assert ((0 <= s.ue_x) & (s.ue_x < size) & (0 <= s.ue_y) & (s.ue_y < size)).all()
    env.step(1)


@pytest.mark.parametrize("action", [9, -1, 2.0, "0", None])
def test_bad_actions_are_named(action):
    env = make()
    with pytest.raises(ValueError, match=r"invalid action .*valid: an int in 0..8"):
        env.unwrapped.step(action)
