"""The rules of BallDuel-v0: winning, drawing, time limits, collisions, mirroring, opponents."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import ballenvs  # noqa: F401
from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import ACTION_NAMES, MIRRORED_ACTION, heading_to_action
from ballenvs.duel.heuristics import Anchor, Chaser, Pusher, RandomPlayer, Sprinter, Still
from ballenvs.duel.physics import THRUST_X, THRUST_Y, DuelState
from ballenvs.duel.tournament import play_matches
from ballenvs.game import Player
from ballenvs.play import keys_to_action


def make(**kwargs):
    env = gym.make("BallDuel-v0", **kwargs)
    env.reset(seed=0)
    return env


def set_state(env, **fields):
    """Place the balls by hand: zero velocities unless given."""
    values = dict(lx=-0.5, ly=0.0, rx=0.5, ry=0.0, lvx=0.0, lvy=0.0, rvx=0.0, rvy=0.0)
    values.update(fields)
    env.unwrapped.game.duel.core.state = DuelState(**values)


def test_right_ball_pushed_out_left_wins():
    env = make(obs_type="state", opponent="still")
    set_state(env, rx=0.99, rvx=0.05)
    _, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info == {"rewards": (1.0, -1.0), "winner": "left"}


def test_left_ball_out_learner_loses():
    env = make(obs_type="state", opponent="still")
    set_state(env, lx=-0.998)
    _, reward, terminated, _, info = env.step(7)  # thrust W, over the edge
    assert (reward, terminated) == (-1.0, True)
    assert info == {"rewards": (-1.0, 1.0), "winner": "right"}


def test_collision_pushes_the_other_ball_out():
    env = make(obs_type="state", opponent="still")
    # Left ball rushes east into the right ball sitting at the edge.
    set_state(env, lx=0.7, lvx=0.06, rx=0.9)
    for _ in range(10):
        _, reward, terminated, _, info = env.step(3)
        if terminated:
            break
    assert terminated and info["winner"] == "left" and reward == 1.0


def test_both_out_in_the_same_step_is_a_draw():
    env = make(obs_type="state", opponent="still")
    set_state(env, lx=-0.99, ly=0.0, lvx=-0.05, rx=0.99, rvx=0.05)
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated) == (0.0, True)
    assert info == {"rewards": (0.0, 0.0), "winner": "draw"}


def test_no_winner_while_playing():
    env = make(obs_type="state")
    _, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info == {"rewards": (0.0, 0.0), "winner": None}


@pytest.mark.parametrize("max_episode_steps", [1000, 7, 2500])
def test_truncation_exactly_at_the_step_limit(max_episode_steps):
    kwargs = {} if max_episode_steps == 1000 else {"max_episode_steps": max_episode_steps}
    env = make(obs_type="state", opponent="still", **kwargs)
    for step in range(1, max_episode_steps + 1):
        _, _, terminated, truncated, _ = env.step(0)
        assert not terminated
        assert truncated == (step == max_episode_steps), step


def test_balls_never_overlap():
    env = make(obs_type="state", opponent="chaser")
    env.action_space.seed(1)
    core = env.unwrapped.game.duel.core
    min_gap = np.inf
    for _ in range(2000):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        s = core.state
        min_gap = min(min_gap, np.hypot(s.rx - s.lx, s.ry - s.ly))
        if terminated or truncated:
            env.reset()
    assert min_gap >= 2 * 0.1 - 1e-9
    assert min_gap < 0.21  # they did touch, so the check was exercised


def test_elastic_collision_swaps_velocities_head_on():
    env = make(obs_type="state", opponent="still")
    set_state(env, lx=-0.105, lvx=0.05, rx=0.105)
    env.step(0)
    s = env.unwrapped.game.duel.core.state
    assert s.lvx == pytest.approx(0.0, abs=1e-12)
    assert s.rvx == pytest.approx(0.05 * 0.95)
    assert s.rx - s.lx == pytest.approx(0.2)


def test_balls_on_the_same_spot_are_pushed_apart_along_x():
    env = make(obs_type="state", opponent="still")
    set_state(env, lx=0.3, ly=0.1, rx=0.3, ry=0.1)
    env.step(0)
    s = env.unwrapped.game.duel.core.state
    assert (s.lx, s.rx) == pytest.approx((0.2, 0.4))
    assert s.ly == s.ry == pytest.approx(0.1)


def test_a_batch_resolves_collisions_game_by_game_as_lone_games_do():
    # The vector core computes collisions for the touching games only and writes them back;
    # every game of the batch, touching or not, must come out bit for bit as it would alone.
    from ballenvs.duel.game import DuelGame

    placements = [
        dict(lx=-0.105, lvx=0.05, rx=0.105),  # head-on, touching at once
        dict(),  # far apart
        dict(lx=0.7, lvx=0.06, rx=0.9, ry=0.01),  # a glancing blow near the edge
        dict(lx=-0.3, ly=0.1, lvy=-0.05, rx=-0.3, ry=-0.1),  # closing along y
        dict(lx=-0.6, ly=0.5),  # far apart
        dict(lx=0.2, ly=-0.2, rx=0.2, ry=-0.2),  # on the same spot
    ]
    balls = [{**dict(lx=-0.5, ly=0.0, rx=0.5, ry=0.0, lvx=0.0, lvy=0.0, rvx=0.0, rvy=0.0), **p} for p in placements]
    batch = DuelGame(len(balls), obs_type="state", opponent="chaser")
    batch.duel.core.state = DuelState(*(np.array([b[field] for b in balls]) for field in DuelState._fields))
    lone = [DuelGame(None, obs_type="state", opponent="chaser") for _ in balls]
    for game, b in zip(lone, balls):
        game.duel.core.state = DuelState(**b)
    actions = np.random.default_rng(0).integers(9, size=(30, len(balls)))
    touched = 0
    for row in actions:
        rewards, terminated, info = batch.step(row, [None] * len(balls))
        s = batch.duel.core.state
        touched += np.count_nonzero(np.hypot(s.rx - s.lx, s.ry - s.ly) < 0.2 + 1e-9)
        for i, game in enumerate(lone):
            result = game.step(int(row[i]), [None])
            assert (float(rewards[i]), bool(terminated[i]), info["winner"][i]) == (result[0], result[1], result[2]["winner"])
            assert [float(field[i]) for field in s] == list(game.duel.core.state)
    assert 0 < touched < 30 * len(balls)  # some games touched while others did not


@pytest.mark.parametrize("obs_type", ["pixels", "state"])
def test_opponent_sees_the_mirror_of_the_learners_view(obs_type):
    env = make(obs_type=obs_type)
    # The right ball's situation is the left ball's, reflected in x.
    set_state(env, lx=-0.3, ly=0.2, lvx=0.01, lvy=-0.02, rx=0.3, ry=0.2, rvx=-0.01, rvy=-0.02)
    learner = env.unwrapped.game.observe()
    assert np.array_equal(env.unwrapped.opponent_observation(), learner)
    # And an asymmetric state gives different views.
    set_state(env, lx=-0.3, ly=0.2, rx=0.6, ry=-0.1)
    assert not np.array_equal(env.unwrapped.opponent_observation(), env.unwrapped.game.observe())


def test_pixels_show_own_ball_brightest_and_the_ring():
    env = make(obs_type="pixels")
    obs = env.unwrapped.game.observe()
    assert obs.shape == (64, 64, 1)
    values = set(np.unique(obs))
    assert {0, 40, 100, 150, 255} <= values
    # Own ball (255) on the left half, the other (150) on the right half.
    assert np.argwhere(obs[..., 0] == 255)[:, 1].mean() < 32 < np.argwhere(obs[..., 0] == 150)[:, 1].mean()


def test_obs_size_option():
    env = make(obs_size=36)
    assert env.observation_space.shape == (36, 36, 1)
    assert env.reset(seed=0)[0].shape == (36, 36, 1)


def test_subpixel_frames_show_a_move_of_a_tenth_of_a_pixel_that_plain_frames_do_not():
    frames = {}
    for subpixel in (False, True):
        env = make(obs_size=36, subpixel=subpixel)
        scale = env.unwrapped.game.duel.observer.scale  # pixels per world unit
        for shift in (0.0, 0.1 / scale):
            set_state(env, lx=-0.5 + shift)
            frames[subpixel, shift] = env.unwrapped.game.observe()[..., 0].astype(int)
    assert np.array_equal(frames[False, 0.0], frames[False, 0.1 / scale])
    moved = frames[True, 0.1 / scale] - frames[True, 0.0]
    assert moved.any() and (moved[:, :18] != 0).any() and not (moved[:, 18:] != 0).any(), "only the own ball's edges change"


def test_subpixel_frames_blend_only_the_balls_edges_and_leave_the_rest_as_plain_frames():
    plain, blended = make(obs_size=36), make(obs_size=36, subpixel=True)
    for env in (plain, blended):
        set_state(env, lx=-0.43, ly=0.12, rx=0.31, ry=-0.2)
    sharp, soft = (env.unwrapped.game.observe()[..., 0] for env in (plain, blended))
    assert soft.max() == 255 and 150 in soft, "each ball keeps its own intensity where it covers a pixel whole"
    differ = sharp != soft
    assert differ.any() and differ.sum() < 40, "only pixels a ball covers in part differ"
    assert set(np.unique(soft[differ])) - {40, 150, 255}, "edges take intensities between the ball's and the floor's"


def test_subpixel_frames_are_the_same_in_the_single_and_the_vector_env():
    single = gym.make("BallSumo-v0", obs_size=36, subpixel=True)
    vector = gym.make_vec("BallSumo-v0", num_envs=2, obs_size=36, subpixel=True)
    obs, _ = single.reset(seed=3)
    batch, _ = vector.reset(seed=[3, 4])
    assert np.array_equal(obs, batch[0])
    for action in (3, 3, 2, 5):
        obs = single.step(action)[0]
        batch = vector.step(np.array([action, 0]))[0]
    assert np.array_equal(obs, batch[0])


def test_mirrored_action_reflects_thrust():
    assert np.allclose(THRUST_X[MIRRORED_ACTION], -THRUST_X)
    assert np.allclose(THRUST_Y[MIRRORED_ACTION], THRUST_Y)


def test_thrust_is_unit_length_in_eight_directions():
    lengths = np.hypot(THRUST_X, THRUST_Y)
    assert lengths[0] == 0 and np.allclose(lengths[1:], 1.0)


@pytest.mark.parametrize("action", range(9))
def test_heading_to_action_inverts_thrust(action):
    hx, hy = float(THRUST_X[action]), float(THRUST_Y[action])
    assert heading_to_action(SCALAR, hx, hy) == action, ACTION_NAMES[action]
    assert heading_to_action(NUMPY, np.array([hx]), np.array([hy]))[0] == action


def test_arrow_keys_map_to_actions():
    assert keys_to_action(True, False, False, False) == 1  # N
    assert keys_to_action(True, False, False, True) == 2  # NE
    assert keys_to_action(False, True, True, False) == 6  # SW
    assert keys_to_action(True, True, False, False) == 0  # opposite keys cancel


@pytest.mark.parametrize("opponent", ["still", "random", "chaser", "pusher"])
def test_builtin_opponents_play(opponent):
    env = make(obs_type="state", opponent=opponent)
    moved = False
    for _ in range(50):
        terminated = env.step(0)[2]
        s = env.unwrapped.game.duel.core.state
        moved |= abs(s.rvx) + abs(s.rvy) > 0
        if terminated:
            env.reset()
    assert moved == (opponent != "still")


def test_pusher_beats_random_and_chaser_beats_still():
    assert play_matches("pusher", "random", games=100, seed=0)["left_wins"] > 0.8
    assert play_matches("chaser", "still", games=20, seed=0)["left_wins"] == 1.0


def test_resetting_every_game_gives_each_its_own_random_start():
    from ballenvs.duel.game import DuelGame

    game = DuelGame(5)
    game.reset([np.random.default_rng(seed) for seed in range(5)])  # games=True: all of them
    starts = np.stack(game.duel.core.state[:4], axis=1)
    assert len(np.unique(starts, axis=0)) == 5


def test_matches_are_mirror_fair():
    # Random starts are not mirror images game by game, so fairness is statistical: the
    # chaser wins as often from either side (standard error of the difference about 0.02).
    forward = play_matches("chaser", "random", games=400, seed=1)
    backward = play_matches("random", "chaser", games=400, seed=2)
    assert forward["left_wins"] == pytest.approx(backward["right_wins"], abs=0.08)


class RecordingModel:
    """A stand-in for a stable-baselines3 model: always thrusts E, in its own frame."""

    def __init__(self):
        self.seen = []

    def predict(self, obs, deterministic=False):
        self.seen.append(obs)
        return np.full(len(obs), 3), None


@pytest.mark.parametrize("obs_type", ["pixels", "state"])
def test_predict_opponent_gets_mirrored_observation_and_acts_mirrored(obs_type):
    model = RecordingModel()
    env = make(obs_type=obs_type, opponent=model)
    expected = env.unwrapped.opponent_observation()
    env.step(0)
    assert np.array_equal(model.seen[0][0], expected)
    # "E" in the right ball's mirrored frame is west in the world: towards the learner.
    assert env.unwrapped.game.duel.core.state.rvx < 0


def test_callable_opponent_is_used():
    calls = []

    def policy(obs):
        calls.append(obs.shape)
        return 1  # north

    env = make(obs_type="state", opponent=policy)
    env.step(0)
    assert calls == [(10,)]
    assert env.unwrapped.game.duel.core.state.rvy > 0


class ClockReader(Player):
    """Records the clock its seat shows; stands still."""

    def __init__(self, reads_clock):
        self.reads_clock, self.seen = reads_clock, []

    def act(self, seat):
        self.seen.append(seat.view.time_left)
        return np.zeros(len(seat.view.own_x), dtype=np.int64)


@pytest.mark.parametrize("reads_clock", [True, False])
def test_a_game_without_a_clock_shows_it_only_to_players_that_read_it(reads_clock):
    # The champion reads the clock on BallDuel-v0 too; chaser does not, and v0 then computes none.
    player = ClockReader(reads_clock)
    envs = gym.make_vec("BallDuel-v0", 3, vectorization_mode="vector_entry_point", obs_type="state", opponent=player)
    envs.reset(seed=0)
    envs.step(np.zeros(3, dtype=np.int64))
    envs.step(np.zeros(3, dtype=np.int64))
    if reads_clock:
        assert np.array_equal(player.seen[1], np.full(3, 1.0 - 1 / 1000))
    else:
        assert player.seen == [None, None]
    assert not any(builtin.reads_clock for builtin in (Chaser, Pusher, Anchor, Sprinter, Still, RandomPlayer))


def test_opponent_policy_with_bad_action_is_named():
    env = make(obs_type="state", opponent=lambda obs: 12)
    with pytest.raises(ValueError, match="returned .*12.*0..8"):
        env.step(0)


def test_seed_fixes_the_random_opponent():
    def opponent_moves(seed):
        env = gym.make("BallDuel-v0", obs_type="state", opponent="random")
        env.reset(seed=seed)
        return [tuple(env.step(0)[0][6:8]) for _ in range(20)]

    assert opponent_moves(5) == opponent_moves(5)
    assert opponent_moves(5) != opponent_moves(6)


def test_shaping_rewards_progress_and_is_off_by_default():
    plain = make(obs_type="state", opponent="still")
    shaped = make(obs_type="state", opponent="still", shaping=1.0)
    for env in (plain, shaped):
        set_state(env, rx=0.5, rvx=0.04)  # the opponent drifts outward
    assert plain.step(0)[1] == 0.0
    assert shaped.step(0)[1] > 0.0


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"obs_type": "rgb"}, "obs_type 'rgb'.*'pixels', 'state'"),
        ({"opponent": "bully"}, "opponent 'bully'.*'still', 'random', 'chaser', 'pusher'"),
        ({"opponent": 3}, "opponent 3"),
        ({"obs_size": 35}, r"obs_size must be an int in \[36, 1024\], got 35"),
        ({"obs_size": 64.0}, r"obs_size must be an int in \[36, 1024\], got 64.0"),
        ({"ring_radius": 0.0}, "ring_radius must be a finite positive number, got 0.0"),
        ({"ball_radius": -0.1}, "ball_radius must be a finite positive number, got -0.1"),
        ({"ball_radius": 0.5}, r"ball_radius must be in \(0, ring_radius / 4"),
        ({"max_steps": 50}, "max_steps=50: the time limit is now gymnasium's max_episode_steps"),
        ({"ring_radius": 1e300}, r"ring_radius must be in \[1e-06, 1e\+06\] \(the game is scale-free\), got 1e\+300"),
        ({"shaping": float("nan")}, "shaping must be a finite number"),
        ({"subpixel": "yes"}, "subpixel must be True or False, got 'yes'"),
        ({"obs_type": "state", "subpixel": True}, "subpixel=True applies to obs_type='pixels' only"),
    ],
)
def test_bad_options_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("BallDuel-v0", **kwargs)


@pytest.mark.parametrize("action", [9, -1, 1.5, "1", None, np.array([1]), True])
def test_bad_actions_are_named(action):
    env = make(obs_type="state")
    with pytest.raises(ValueError, match=r"invalid action .*valid: an int in 0..8"):
        env.unwrapped.step(action)


def test_numpy_integer_actions_are_accepted():
    env = make(obs_type="state")
    env.step(np.int64(3))
    env.step(np.array(3))


def test_reset_rejects_options():
    env = gym.make("BallDuel-v0")
    with pytest.raises(ValueError, match="no reset options"):
        env.reset(options={"opponent": "still"})
