"""BallSumo-v0's rules (a domed floor, the ball nearer the centre wins at the time limit, the clock
in both observations), the players anchor and sprinter, the round robin, and BallDuel-v0 kept
bit for bit."""

from __future__ import annotations

import hashlib
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

import ballenvs  # noqa: F401  (registers the ids)
from ballenvs.cli import run as run_command
from ballenvs.directions import ACTION_NAMES
from ballenvs.duel.match import main as match_main
from ballenvs.duel.observe import CLOCK, OUTSIDE
from ballenvs.duel.physics import LEFT, RIGHT, DuelState
from ballenvs.duel.roster import SCRIPTED_PLAYERS, make_player
from ballenvs.duel.tournament import match_outcomes, play_pairs, registered_options
from ballenvs.duel.two_player_game import DRAW, LEFT_WINS, RIGHT_WINS, TwoPlayerDuel

V1 = registered_options("BallSumo-v0")
SUMO_RULES = {key: V1[key] for key in ("floor_slope", "time_limit_rule", "game_steps")}

#: sha256 (first 16 hex digits) of 300 random-action steps of BallDuel-v0 (time limit 120), made
#: with the code of 46d5471, before BallSumo (then BallDuel-v1) existed: the single env and an 8-env vector env, each
#: opponent, both observations, shaping off and on.
V0_DIGESTS = {
    "single-still-pixels-0.0": "99beb001364ba837",
    "single-still-pixels-0.5": "b02de8a3338feb9c",
    "single-still-state-0.0": "237fe127d046c06e",
    "single-still-state-0.5": "c8d09cd8111ce836",
    "single-random-pixels-0.0": "d9eea07151d65581",
    "single-random-pixels-0.5": "b8f2ebe49d9ac4ff",
    "single-random-state-0.0": "cedfc2c7a85933b4",
    "single-random-state-0.5": "c7e432f698a0f588",
    "single-chaser-pixels-0.0": "bcbcdaad10f7a6c5",
    "single-chaser-pixels-0.5": "a668c888d8a3e310",
    "single-chaser-state-0.0": "79765973735238f9",
    "single-chaser-state-0.5": "28553b0420c09513",
    "single-pusher-pixels-0.0": "b062325c92ecaf16",
    "single-pusher-pixels-0.5": "5ea71a49e0b35fc4",
    "single-pusher-state-0.0": "d5e62136db7830e1",
    "single-pusher-state-0.5": "6293dc0427c3f510",
    "vector-still-pixels-0.0": "bb0b85c17de10c14",
    "vector-still-pixels-0.5": "aed8ec0941b4dda6",
    "vector-still-state-0.0": "831310bfb775a446",
    "vector-still-state-0.5": "a366070183bc8b81",
    "vector-random-pixels-0.0": "c6d76caf8c2f83fe",
    "vector-random-pixels-0.5": "41692a10902d42a3",
    "vector-random-state-0.0": "6308d0268c51e4ae",
    "vector-random-state-0.5": "facae165ff84387a",
    "vector-chaser-pixels-0.0": "eb22706f99942848",
    "vector-chaser-pixels-0.5": "8a6f2d591e4ed5c5",
    "vector-chaser-state-0.0": "a0af8de3c9563231",
    "vector-chaser-state-0.5": "c812b88b656df0a3",
    "vector-pusher-pixels-0.0": "f8c17d1445ad7cc9",
    "vector-pusher-pixels-0.5": "23652d9353a5d162",
    "vector-pusher-state-0.0": "ffacea1108ff2158",
    "vector-pusher-state-0.5": "033bf9ea72c16f47",
}


def v0_digest(single: bool, opponent: str, obs_type: str, shaping: float, steps: int = 300) -> str:
    digest, rng = hashlib.sha256(), np.random.default_rng(1)
    kwargs = {"opponent": opponent, "obs_type": obs_type, "shaping": shaping, "max_episode_steps": 120}
    if single:
        env = gym.make("BallDuel-v0", **kwargs)
        obs, _ = env.reset(seed=0)
        digest.update(np.ascontiguousarray(obs).tobytes())
        for _ in range(steps):
            obs, reward, terminated, truncated, info = env.step(int(rng.integers(9)))
            digest.update(np.ascontiguousarray(obs).tobytes() + np.float64(reward).tobytes())
            digest.update(bytes([terminated, truncated]) + str(info["winner"]).encode())
            if terminated or truncated:
                obs, _ = env.reset()
                digest.update(np.ascontiguousarray(obs).tobytes())
        return digest.hexdigest()[:16]
    env = gym.make_vec("BallDuel-v0", num_envs=8, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = env.reset(seed=0)
    digest.update(np.ascontiguousarray(obs).tobytes())
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(rng.integers(9, size=8))
        digest.update(np.ascontiguousarray(obs).tobytes() + np.asarray(reward, np.float64).tobytes())
        digest.update(terminated.tobytes() + truncated.tobytes() + str(list(info["winner"])).encode())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("key", list(V0_DIGESTS))
def test_ballduel_v0_is_unchanged_bit_for_bit(key):
    face, opponent, obs_type, shaping = key.split("-")
    assert v0_digest(face == "single", opponent, obs_type, float(shaping)) == V0_DIGESTS[key]


def placed(duel: TwoPlayerDuel, left: tuple[float, float], right: tuple[float, float]) -> None:
    duel.core.state = DuelState(*left, *right, 0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "left,right,winner",
    [((-0.2, 0.0), (0.5, 0.0), LEFT_WINS), ((-0.6, 0.0), (0.0, 0.3), RIGHT_WINS), ((-0.4, 0.0), (0.4, 0.0), DRAW)],
    ids=["left-nearer", "right-nearer", "level"],
)
def test_at_the_time_limit_the_ball_nearer_the_centre_wins(left, right, winner):
    duel = TwoPlayerDuel(None, obs_type="state", time_limit_rule="nearer_centre", game_steps=5)
    duel.reset([np.random.default_rng(0)])
    placed(duel, left, right)
    for step in range(1, 6):
        reward, terminated = duel.play(0, 0)
        assert terminated == (step == 5)
    assert duel.winner == winner
    assert reward == {LEFT_WINS: 1.0, RIGHT_WINS: -1.0, DRAW: 0.0}[winner]


def test_under_the_draw_rule_the_time_limit_decides_nothing():
    duel = TwoPlayerDuel(None, obs_type="state", game_steps=5)
    duel.reset([np.random.default_rng(0)])
    placed(duel, (-0.2, 0.0), (0.5, 0.0))
    assert not any(duel.play(0, 0)[1] for _ in range(10))


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "BallSumo-v0"])
def test_v1_games_end_terminated_with_a_result_never_truncated(env_id):
    single = gym.make(env_id, obs_type="state", opponent="anchor", game_steps=10)
    envs = gym.make_vec(env_id, 3, obs_type="state", opponent="anchor", game_steps=10)
    single.reset(seed=0)
    envs.reset(seed=0)
    for _ in range(10):  # the learner stays put; anchor heads for the centre
        _, _, terminated, truncated, info = single.step(0)
        _, _, vector_terminated, vector_truncated, _ = envs.step(np.zeros(3, dtype=np.int64))
    if env_id == "BallSumo-v0":
        assert terminated and not truncated and info["winner"] == "right"
        assert vector_terminated.all() and not vector_truncated.any()
        assert gym.spec(env_id).max_episode_steps > V1["game_steps"], "the registered limit never cuts a game short"
    else:
        assert not terminated and not vector_terminated.any() and info["winner"] is None


def test_a_domed_floor_pushes_a_still_ball_out_and_a_flat_one_does_not():
    for slope, leaves in ((0.0, False), (V1["floor_slope"], True)):
        duel = TwoPlayerDuel(None, obs_type="state", floor_slope=slope)
        duel.reset([np.random.default_rng(0)])
        placed(duel, (-0.3, 0.0), (0.0, 0.8))
        out = any(duel.play(0, 0)[1] for _ in range(300))
        assert out == leaves, slope
    with pytest.raises(ValueError, match=r"floor_slope must be in \[0, 10\], got -1.0"):
        TwoPlayerDuel(None, floor_slope=-1.0)


def test_the_clock_is_the_state_vectors_last_entry_and_a_bar_in_the_pixels():
    state = gym.make("BallSumo-v0", obs_type="state", game_steps=40)
    obs, _ = state.reset(seed=0)
    assert state.observation_space.shape == (11,) and obs[-1] == 1.0 and obs in state.observation_space
    for _ in range(10):
        obs = state.step(0)[0]
    assert obs[-1] == pytest.approx(0.75)
    assert gym.make("BallDuel-v0", obs_type="state").observation_space.shape == (10,), "v0 shows no clock"
    pixels = gym.make("BallSumo-v0", game_steps=40)
    frame, _ = pixels.reset(seed=0)
    assert (frame[0, :, 0] == CLOCK).all(), "a full bar at the start"
    for _ in range(30):
        frame = pixels.step(0)[0]
    top = frame[0, :, 0]
    assert (top[:16] == CLOCK).all() and (top[16:] == OUTSIDE).all(), "a quarter of 64 columns left"
    assert not (gym.make("BallDuel-v0").reset(seed=0)[0] == CLOCK).any()


def test_the_clock_is_the_same_in_single_and_vector_envs():
    envs = gym.make_vec("BallSumo-v0", 2, vectorization_mode="vector_entry_point", game_steps=30)
    single = gym.make("BallSumo-v0", game_steps=30)
    frames, _ = envs.reset(seed=0)
    frame, _ = single.reset(seed=0)
    for _ in range(12):
        assert np.array_equal(frames[0], frame)
        frames = envs.step(np.zeros(2, dtype=np.int64))[0]
        frame = single.step(0)[0]


def test_shaping_on_v1_stays_potential_based():
    """The shaping terms of a game add up to -w * phi(start): a potential with phi = 0 at the end."""
    env = gym.make("BallSumo-v0", obs_type="state", opponent="chaser", shaping=0.5)
    plain = gym.make("BallSumo-v0", obs_type="state", opponent="chaser")
    obs, _ = env.reset(seed=3)
    plain.reset(seed=3)
    own, other = np.hypot(*obs[0:2]), np.hypot(*obs[4:6])
    shaped_total = game_total = 0.0
    for step in range(1000):
        _, reward, terminated, truncated, _ = env.step(step % 9)
        _, unshaped, *_ = plain.step(step % 9)
        shaped_total += reward
        game_total += unshaped
        if terminated or truncated:
            break
    assert terminated
    assert shaped_total - game_total == pytest.approx(-0.5 * (other - own), abs=1e-6)


@pytest.mark.parametrize("name", ["anchor", "sprinter", "champion", "ppo_champion", "dqn_champion"])
def test_the_new_players_play_the_same_one_game_at_a_time_or_batched(name):
    batched = match_outcomes(name, "pusher", games=6, seed=2, max_episode_steps=150, **SUMO_RULES)
    one_by_one = [
        match_outcomes(name, "pusher", games=1, seed=int(s.generate_state(1)[0]), max_episode_steps=150, **SUMO_RULES)[0]
        for s in np.random.SeedSequence(2).spawn(6)
    ]
    assert batched.shape == (6,) and len(one_by_one) == 6
    duel_one, duel_many = TwoPlayerDuel(None, obs_type="state", **SUMO_RULES), TwoPlayerDuel(4, obs_type="state", **SUMO_RULES)
    rngs = [np.random.default_rng(k) for k in range(4)]
    duel_many.reset(rngs)
    one_player, many_player = make_player(name, duel_one.physics), make_player(name, duel_many.physics)
    many_player.reset(None)
    for _ in range(30):
        actions = many_player.act(duel_many.seat(LEFT, rngs))
        for k in range(4):
            duel_one.core.state = DuelState(*(float(field[k]) for field in duel_many.core.state))
            duel_one.core.steps = int(duel_many.core.steps[k])
            one_player.reset(None)
            if name != "sprinter":  # memoryless: the same action from the same view
                assert one_player.act(duel_one.seat(LEFT, [rngs[k]])) == actions[k]
        duel_many.play(actions, many_player.act(duel_many.seat(RIGHT, rngs)))


def test_the_sprinter_beats_pusher_and_anchor_holds_against_the_sprinter():
    sprinter_pusher = match_outcomes("sprinter", "pusher", games=40, seed=0, max_episode_steps=1000, **SUMO_RULES)
    assert np.mean(sprinter_pusher == LEFT_WINS) > 0.5
    anchor_sprinter = match_outcomes("anchor", "sprinter", games=10, seed=0, max_episode_steps=1000, **SUMO_RULES)
    assert (anchor_sprinter == LEFT_WINS).all()


@pytest.mark.slow  # 100 games a script
@pytest.mark.parametrize("script", SCRIPTED_PLAYERS)
def test_the_shipped_champion_beats_every_script_on_v1(script):
    """The model that ships as ``champion``: at least 90 of 100 games against each script under
    BallSumo-v0's registered rules, half from each side (RESULTS, PPO in rounds: 96-100%)."""
    result = play_pairs("champion", script, games=100, seed=7, **registered_options("BallSumo-v0"))
    assert result["first_wins"] >= 90, result


def test_the_round_robin_prints_every_pairing(capsys):
    match_main(["--round-robin", "--env", "BallSumo-v0", "--games", "2"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| first")]
    names = ("still", "random", "chaser", "pusher", "anchor", "sprinter", "champion", "dqn_champion")  # not the planner
    assert len(rows) == len(names) * (len(names) - 1) // 2
    assert "| anchor | sprinter | 2 | 0 | 0 | 2 |" in out
    progress = [line for line in out.splitlines() if line.startswith("  pair ")]
    assert [line.split(":")[0] for line in progress] == [f"  pair {k}/{len(rows)}" for k in range(1, len(rows) + 1)]
    match_main(["--round-robin", "--env", "BallSumo-v0", "--games", "2", "--no-progress"])
    assert "  pair " not in capsys.readouterr().out


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "BallSumo-v0"])
def test_the_champion_plays_either_observation_without_torch(env_id):
    """The shipped champion is numpy only: it reads the balls and the clock from its seat, so it
    plays a pixel learner too, and importing and playing it never imports torch."""
    import subprocess
    import sys

    script = f"""
import sys, gymnasium as gym, numpy as np, ballenvs
for obs_type in ("pixels", "state"):
    env = gym.make({env_id!r}, opponent="champion", obs_type=obs_type)
    env.reset(seed=0)
    for _ in range(60):
        *_, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            env.reset()
vec = gym.make_vec({env_id!r}, num_envs=4, vectorization_mode="vector_entry_point", opponent="champion")
vec.reset(seed=0)
for _ in range(30):
    vec.step(np.zeros(4, dtype=np.int64))
assert "torch" not in sys.modules, "the champion imported torch"
print("played")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "played" in done.stdout, done.stderr


def _planner(duel: TwoPlayerDuel):
    return make_player("planner", duel.physics, duel.rules)


def test_the_planner_acts_the_same_one_game_at_a_time_or_batched():
    duel_one, duel_many = TwoPlayerDuel(None, obs_type="state", **SUMO_RULES), TwoPlayerDuel(3, obs_type="state", **SUMO_RULES)
    rngs = [np.random.default_rng(k) for k in range(3)]
    duel_many.reset(rngs)
    one_player, many_player = _planner(duel_one), _planner(duel_many)
    for _ in range(4):
        actions = many_player.act(duel_many.seat(LEFT, rngs))
        for k in range(3):
            duel_one.core.state = DuelState(*(float(field[k]) for field in duel_many.core.state))
            duel_one.core.steps = int(duel_many.core.steps[k])
            action = one_player.act(duel_one.seat(LEFT, [rngs[k]]))
            assert isinstance(action, int) and action == actions[k]
        duel_many.play(actions, many_player.act(duel_many.seat(RIGHT, rngs)))


def test_the_planner_brakes_a_run_off_the_edge():
    """Its ball near the east edge and running east; standing still loses: it thrusts west."""
    duel = TwoPlayerDuel(None, obs_type="state", **SUMO_RULES)
    duel.core.state = DuelState(0.8, 0.0, -0.5, 0.0, 0.04, 0.0, 0.0, 0.0)
    action = _planner(duel).act(duel.seat(LEFT, [np.random.default_rng(0)]))
    assert ACTION_NAMES[action] in ("W", "NW", "SW"), ACTION_NAMES[action]


@pytest.mark.parametrize("opponent", ["dqn_champion", "pusher"])
def test_the_planner_beats_the_first_champion_and_pusher(opponent):
    """The planner, which models no opponent, against the first learned champion and against pusher
    (its hardest script; README, The planner): most games, half from each side."""
    result = play_pairs("planner", opponent, games=6, seed=3, **registered_options("BallSumo-v0"))
    assert result["first_wins"] >= 5, result


def test_the_champion_beats_the_first_one_and_holds_the_planner_level():
    """The shipped champion (our PPO in rounds from a planner's student) wins every game against
    the first champion, which the planner beats, and takes about half from the planner itself and
    from the second champion (the seat decides most starts between them: RESULTS, our PPO from the
    same start)."""
    options = registered_options("BallSumo-v0")
    assert play_pairs("champion", "dqn_champion", games=10, seed=3, **options)["first_wins"] == 10
    assert play_pairs("champion", "planner", games=6, seed=3, **options)["first_wins"] >= 2
    assert play_pairs("champion", "ppo_champion", games=6, seed=3, **options)["first_wins"] >= 2
    level = play_pairs("champion", "ppo_champion", games=20, seed=3, **options)
    assert level["first_won_both"] + level["second_won_both"] <= 2, level  # 8 of 10 starts or more split by the seat


#: sha256 of each earlier champion's weights as it shipped as ``champion`` (until 2026-12-05 and
#: until 2026-12-06), so that results that name it can be reproduced under its own name.
EARLIER_CHAMPIONS = {
    "dqn_champion": "58c02d8b9caa2c6c34b05f3f01b4ae2933fb45e0ae3d013fd80d6ccacf726961",
    "ppo_champion": "7e54ad7ce912e8d85ea9eef22d4e840c31300501a6feaf8df7357812e8cf7d43",
}
#: sha256 of each shipped network under the name that never changes meaning: a version whose file
#: changes fails here; a new network ships as a new version.
CHAMPION_VERSIONS = {
    "champion-v1": EARLIER_CHAMPIONS["dqn_champion"],
    "champion-v2": EARLIER_CHAMPIONS["ppo_champion"],
    "champion-v3": "334a4450b73016a9376698480efd3d773d29362f5ed4690e1f104b94ab8da34c",
}


@pytest.mark.parametrize("version", sorted(CHAMPION_VERSIONS))
def test_each_champion_version_is_pinned_by_its_hash_and_plays_by_name(version):
    from pathlib import Path

    from ballenvs.duel import champion

    assert set(champion.VERSIONS) == set(CHAMPION_VERSIONS), "every shipped network is pinned"
    shipped = Path(champion.__file__).parent / champion.VERSIONS[version]
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == CHAMPION_VERSIONS[version]
    env = gym.make("BallSumo-v0", opponent=version, obs_type="state")
    env.reset(seed=0)
    assert env.observation_space.contains(env.step(0)[0])
    env.close()


def test_the_unversioned_names_are_aliases_and_reports_say_the_version():
    from ballenvs.duel import champion

    assert {alias: champion.version_of(alias) for alias in champion.ALIASES} == {
        "dqn_champion": "champion-v1", "ppo_champion": "champion-v2", "champion": "champion-v3",
    }  # fmt: skip
    assert champion.version_of("champion") == max(champion.VERSIONS), "champion: the newest version"
    assert champion.played_as("champion") == "champion (champion-v3)" and champion.played_as("pusher") == "pusher"
    assert champion.load_weights("champion") is champion.load_weights("champion-v3")
    assert run_command(match_main, ["champion-v1", "chaser", "--games", "2", "--no-progress"]) == 0


@pytest.mark.parametrize("name", sorted(EARLIER_CHAMPIONS))
def test_each_earlier_champion_plays_under_its_own_name_as_it_shipped(name):
    from pathlib import Path

    from ballenvs.duel import champion
    from ballenvs.reference import reference_for

    shipped = Path(champion.__file__).parent / champion.WEIGHTS[name]
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == EARLIER_CHAMPIONS[name]
    assert champion.load_weights(name) is not champion.load_weights("champion")
    reference = reference_for("BallSumo-v0")
    assert name in reference.players  # playable by name: opponent=, --opponent, a teacher, a pool
    env = gym.make("BallSumo-v0", opponent=name, obs_type="state")
    env.reset(seed=0)
    assert env.observation_space.contains(env.step(0)[0])
    env.close()


def test_the_planner_is_an_opponent_by_name_and_no_yardstick():
    from ballenvs.reference import reference_for

    env = gym.make("BallSumo-v0", opponent="planner", obs_type="state")
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step(0)
    assert not (terminated or truncated) and info["winner"] is None
    env.close()
    reference = reference_for("BallSumo-v0")
    assert "planner" in reference.players and "planner" not in reference.yardstick_players
    # The second champion, level with the champion, is played where it is named, as the planner is.
    assert "ppo_champion" in reference.players and "ppo_champion" not in reference.yardstick_players
    assert [y.name for y in reference.yardsticks] == [f"wins vs {name}" for name in reference.yardstick_players]
    # The players at the planner's level measure a learner and never pick its best model.
    assert reference.held_out_players == ("champion", "ppo_champion", "planner")


def test_a_learned_leaf_value_scores_the_branches_still_running_at_their_end():
    """Mixed into the balls' distances by its weight; a branch that ended keeps its result."""
    from ballenvs.duel.search import Branches, hold_branches, seat_view

    duel = TwoPlayerDuel(None, obs_type="state", **SUMO_RULES)
    duel.core.state = DuelState(-0.3, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0)  # level, far from the edge
    view, time_left = seat_view(duel.seat(LEFT, [np.random.default_rng(0)]))
    actions, holds = hold_branches((3,))
    still = lambda t, seat: np.zeros(len(seat.view.own_x), dtype=np.int64)  # noqa: E731

    def scores(weight: float) -> np.ndarray:
        branches = Branches(SUMO_RULES, np.random.default_rng(0), lambda seat: np.full(len(seat.view.own_x), 0.5), weight)
        return branches.scores(view, time_left, actions, holds, still)

    distances = scores(0.0)
    assert np.abs(distances).max() < 1  # three steps end no game: every branch is a position
    np.testing.assert_allclose(scores(1.0), 0.5)
    np.testing.assert_allclose(scores(0.4), 0.6 * distances + 0.4 * 0.5)
    with pytest.raises(ValueError, match=r"leaf_weight must be in \[0, 1\], got 1.5"):
        Branches(SUMO_RULES, np.random.default_rng(0), None, 1.5)


@pytest.mark.parametrize(
    "options,message",
    [
        ({"models": ("planner",)}, "planner models ['planner']: each must be one of still, random,"),
        ({"horizons": (0, 8)}, "horizons must be whole numbers of steps >= 1, got (0, 8)"),
    ],
)
def test_the_planner_refuses_bad_options(options, message):
    from ballenvs.duel.roster import make_planner

    with pytest.raises(ValueError, match=re.escape(message)):
        make_planner(SUMO_RULES, **options)


def test_a_planner_with_holds_of_its_own_is_a_player_by_name_and_the_default_holds_are_the_planner():
    """``planner:H/H/...`` is the planner holding its actions H steps: an env's opponent, a match's
    player, and with the built-in planner's own holds the same moves as ``planner``."""
    from ballenvs.duel.reference import DuelArena

    physics = TwoPlayerDuel(None, obs_type="state", **SUMO_RULES).physics
    deep = make_player("planner:20/2/10/5", physics, SUMO_RULES)
    assert sorted(set(deep.holds.tolist())) == [2, 5, 10, 20]
    assert DuelArena("BallSumo-v0").knows("planner:2/5/10/20") and not DuelArena("BallSumo-v0").knows("nobody")
    duel = TwoPlayerDuel(3, obs_type="state", **SUMO_RULES)
    rngs = [np.random.default_rng(k) for k in range(3)]
    duel.reset(rngs)
    same = make_player("planner:3/8/16", physics, SUMO_RULES)
    np.testing.assert_array_equal(same.act(duel.seat(LEFT, rngs)), _planner(duel).act(duel.seat(LEFT, rngs)))
    env = gym.make("BallSumo-v0", opponent="planner:2/5", obs_type="state")
    env.reset(seed=0)
    env.step(0)
    env.close()


@pytest.mark.parametrize(
    "spec", ["planner:", "planner:0", "planner:2/x", "planner:5/5", "planner:5/05", "planner:101", "planner:²"]
)
def test_a_planner_with_bad_holds_is_refused_naming_the_valid_ones(spec):
    from ballenvs.duel.reference import DuelArena

    message = f"player {spec!r}: planner:H/H/... takes different holds H, whole numbers of steps in 1..100"
    with pytest.raises(ValueError, match=re.escape(message)):
        DuelArena("BallSumo-v0").knows(spec)
    with pytest.raises(ValueError, match=re.escape(message)):
        gym.make("BallSumo-v0", opponent=spec, obs_type="state")


def test_the_match_command_plays_a_search_player_from_both_sides(capsys):
    match_main(["lookahead:still", "still", "--env", "BallSumo-v0", "--games", "4", "--both-sides"])
    out = capsys.readouterr().out
    assert "lookahead:still vs still over 4 games, half from each side: lookahead:still won 4, still 0, drawn 0" in out
    assert "of its 2 starts, each played from both sides, lookahead:still won 2 from both, still 0" in out


@pytest.mark.parametrize("games", [10, 11])
def test_each_start_of_a_pair_is_played_from_both_sides(games):
    """Game k of each half starts alike: a player that wins every game wins every start from both
    sides (an odd count's last game has no pair), the loser none."""
    options = registered_options("BallSumo-v0")
    for first, second in (("pusher", "still"), ("still", "pusher")):
        result = play_pairs(first, second, games=games, seed=0, **options)
        assert result["starts"] == 5
        won_both = {first: result["first_won_both"], second: result["second_won_both"]}
        assert won_both == {"pusher": 5, "still": 0}, result


@pytest.mark.parametrize("spec", ["nobody", "lookahead:planner", "lookahead:"])
def test_the_match_command_refuses_an_unknown_player_naming_the_valid_ones(capsys, spec):
    assert run_command(match_main, [spec, "still", "--env", "BallSumo-v0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1  # one line, no usage block
    assert f"player {spec!r}: valid: still, random," in err and "lookahead:NAME with NAME one of" in err
    assert "planner:H/H/... (the planner holding its actions H steps)" in err


@pytest.mark.parametrize(
    "flags, said",
    [
        (["--games", "99999999999999", "--both-sides"], "--games: 99999999999999 is outside [2, 1,000,000]"),
        (["--games", "1"], "--games: 1 is outside [2, 1,000,000]"),
        (["--seed", "-1"], "--seed: -1 is outside [0, 4,294,967,295]"),
        (["--seed", "1.5"], "--seed: '1.5' is not a whole number"),
    ],
)
def test_the_match_command_refuses_counts_and_seeds_out_of_range_in_one_line_before_playing(capsys, flags, said):
    assert run_command(match_main, ["chaser", "pusher", *flags]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_stepping_a_finished_game_names_ballsumo_not_the_duel():
    env = gym.make("BallSumo-v0", opponent="pusher")
    env.reset(seed=0)
    ended = False
    while not ended:
        _, _, terminated, truncated, _ = env.step(0)
        ended = terminated or truncated
    with pytest.raises(ResetNeeded, match=r"^BallSumo-v0: step\(\) called after the episode ended"):
        env.step(0)
    vector = gym.make_vec("BallSumo-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ResetNeeded, match=r"^BallSumo-v0 vector env: step\(\) called before the first reset"):
        vector.step(np.zeros(2, dtype=np.int64))
