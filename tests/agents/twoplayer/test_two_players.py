"""BallDuel as a two-player game: PettingZoo's own tests, zero-sum rewards, symmetry, the batched
two-player step, and BallDuel-v0 as the same game with one side driven by its opponent."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding

pytest.importorskip("pettingzoo")
from pettingzoo.test import parallel_api_test, parallel_seed_test, render_test  # noqa: E402

from ballenvs.duel import env as aec_env  # noqa: E402
from ballenvs.duel import parallel_env  # noqa: E402
from ballenvs.duel.heuristics import Chaser  # noqa: E402
from ballenvs.duel.observe import side_view  # noqa: E402
from ballenvs.duel.physics import LEFT, RIGHT, DuelState  # noqa: E402
from ballenvs.duel.two_player_game import TwoPlayerDuel  # noqa: E402
from ballenvs.game import Seat  # noqa: E402


@pytest.mark.parametrize("obs_type", ["pixels", "state"])
def test_pettingzoos_own_api_seed_and_render_tests(obs_type):
    parallel_api_test(parallel_env(obs_type=obs_type, shaping=0.5), num_cycles=1000)
    parallel_seed_test(lambda: parallel_env(obs_type=obs_type))
    render_test(lambda render_mode=None: aec_env(render_mode=render_mode, obs_type=obs_type))


def test_importing_ballenvs_never_imports_pettingzoo():
    code = "import sys, ballenvs, ballenvs.duel; print('pettingzoo' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_rewards_are_zero_sum_shaping_included_and_name_the_winner():
    env = parallel_env(obs_type="state", shaping=1.0, max_cycles=400)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    winners = set()
    for _ in range(2000):
        _, rewards, terminations, truncations, infos = env.step({agent: int(rng.integers(9)) for agent in env.agents})
        assert rewards["left"] == -rewards["right"]
        assert infos["left"] == infos["right"]
        assert terminations["left"] == terminations["right"] and truncations["left"] == truncations["right"]
        if terminations["left"]:
            winner = infos["left"]["winner"]
            winners.add(winner)
            assert winner in ("left", "right", "draw")
        if terminations["left"] or truncations["left"]:
            assert env.agents == []
            env.reset()
    assert {"left", "right"} <= winners


def test_seeds_fix_the_game_and_differ_between_seeds():
    def play(seed):
        env = parallel_env(obs_type="state")
        observations, _ = env.reset(seed=seed)
        trace = [observations["left"].copy()]
        for t in range(50):
            observations, *_ = env.step({"left": t % 9, "right": (t * 5) % 9})
            trace.append(observations["right"].copy())
        return np.array(trace)

    assert np.array_equal(play(7), play(7)) and not np.array_equal(play(7), play(8))


def mirrored(state: DuelState) -> DuelState:
    """The same situation with the sides swapped: each ball where the other was, x negated."""
    s = state
    return DuelState(-s.rx, s.ry, -s.lx, s.ly, -s.rvx, s.rvy, -s.lvx, s.lvy)


def test_mirroring_the_start_and_swapping_the_actions_mirrors_the_game():
    a, b = TwoPlayerDuel(None, obs_type="pixels", shaping=0.7), TwoPlayerDuel(None, obs_type="pixels", shaping=0.7)
    a.reset([np.random.default_rng(4)])
    b.core.state, b.core.steps = mirrored(a.core.state), 0
    rng = np.random.default_rng(1)
    chaser = Chaser()
    touched = False
    for _ in range(400):
        assert np.array_equal(a.observe(LEFT), b.observe(RIGHT)) and np.array_equal(a.observe(RIGHT), b.observe(LEFT))
        # The left ball chases (so that the balls meet), the right one moves at random.
        left = (
            chaser.act(Seat(side_view(a.core.state, LEFT), a.xp, None, None)) if rng.random() < 0.8 else int(rng.integers(9))
        )
        right = int(rng.integers(9))
        reward_a, terminated_a = a.play(left, right)
        reward_b, terminated_b = b.play(right, left)
        assert reward_a == -reward_b and terminated_a == terminated_b
        assert np.allclose(np.array(a.core.state), np.array(mirrored(b.core.state)), rtol=0, atol=1e-12)
        s = a.core.state
        touched |= np.hypot(s.rx - s.lx, s.ry - s.ly) < 0.2 + 1e-9
        if terminated_a:
            assert (a.winner, b.winner) in ((1, 2), (2, 1), (3, 3))
            break
    assert touched, "the balls met, so collisions were mirrored too"


@pytest.mark.parametrize("obs_type", ["state", "pixels"])
def test_the_batched_two_player_step_is_n_parallel_games(obs_type):
    n, seed = 5, 20
    batch = TwoPlayerDuel(n, obs_type=obs_type, shaping=0.3)
    rngs = [seeding.np_random(seed + i)[0] for i in range(n)]
    batch.reset(rngs)
    games = [parallel_env(obs_type=obs_type, shaping=0.3) for _ in range(n)]
    for i, game in enumerate(games):
        observations, _ = game.reset(seed=seed + i)
        assert np.array_equal(observations["left"], batch.observe(LEFT)[i])
        assert np.array_equal(observations["right"], batch.observe(RIGHT)[i])
    actions = np.random.default_rng(2).integers(9, size=(120, 2, n))
    running = np.ones(n, dtype=bool)
    for left, right in actions:
        rewards, terminated = batch.play(left, right)
        for i in np.flatnonzero(running):
            observations, game_rewards, terminations, _, _ = games[i].step({"left": int(left[i]), "right": int(right[i])})
            assert np.array_equal(observations["left"], batch.observe(LEFT)[i])
            assert np.array_equal(observations["right"], batch.observe(RIGHT)[i])
            assert game_rewards == {"left": float(rewards[i]), "right": -float(rewards[i])}
            assert terminations["left"] == bool(terminated[i])
        running &= ~terminated
    assert not running.all(), "some games ended on the way"


def test_ballduel_v0_is_the_two_player_game_with_its_opponent_on_the_right():
    single = gym.make("BallDuel-v0", obs_type="state", opponent="chaser", shaping=0.2).unwrapped
    single.reset(seed=9)
    two = parallel_env(obs_type="state", shaping=0.2)
    observations, _ = two.reset(seed=9)
    chaser = Chaser()
    rng = np.random.default_rng(3)
    for _ in range(300):
        assert np.array_equal(observations["left"], single.game.observe())
        action = int(rng.integers(9))
        chased = chaser.act(Seat(side_view(two.duel.core.state, RIGHT), two.duel.xp, None, None))
        observations, rewards, terminations, _, _ = two.step({"left": action, "right": chased})
        _, reward, terminated, _, _ = single.step(action)
        assert rewards["left"] == reward and terminations["left"] == terminated
        if terminated:
            break


def test_bad_actions_and_steps_without_a_game_are_refused():
    env = parallel_env(obs_type="state")
    from gymnasium.error import ResetNeeded

    with pytest.raises(ResetNeeded, match="no game running"):
        env.step({"left": 0, "right": 0})
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must be given for \['left', 'right'\]"):
        env.step({"left": 0})
    with pytest.raises(ValueError, match="invalid action 9"):
        env.step({"left": 9, "right": 0})
    with pytest.raises(ValueError, match="unknown BallDuel \\(two players\\) option.*'opponent'"):
        parallel_env(opponent="chaser")


def test_the_versioned_modules_are_their_ids_games_through_pettingzoos_own_tests():
    """``ballduel_v0`` and ``ballsumo_v0``, as PettingZoo's own modules are named: BallSumo's state
    carries its clock (11 numbers, BallDuel's 10) and its games end by step 101; both pass
    PettingZoo's api test."""
    from ballenvs.duel import ballduel_v0, ballsumo_v0

    for module, numbers in ((ballduel_v0, 10), (ballsumo_v0, 11)):
        parallel_api_test(module.parallel_env(obs_type="state"), num_cycles=200)
        assert module.env(obs_type="state").possible_agents == ["left", "right"]
        assert module.parallel_env(obs_type="state").observation_space("left").shape == (numbers,)
    game = ballsumo_v0.parallel_env(obs_type="state")
    game.reset(seed=0)
    steps = 0
    while game.agents:
        game.step({agent: game.action_space(agent).sample() for agent in game.agents})
        steps += 1
    assert steps <= 101


def test_a_built_in_player_drives_either_seat_of_the_state_face_from_its_observation():
    """``ballenvs.duel.policy(name)`` reads a side's mirrored state observation as the player would
    read the game: the champion beats chaser from the right seat as it does as the env's opponent."""
    import ballenvs
    from ballenvs.duel import ballsumo_v0, policy

    game = ballsumo_v0.parallel_env(obs_type="state")
    champion, chaser = (policy(name, **ballenvs.SUMO_RULES) for name in ("champion-v3", "chaser"))
    won = 0
    for seed in range(20):
        observations, _ = game.reset(seed=seed)
        assert isinstance(champion(observations["right"]), int)  # one observation, one action
        while game.agents:
            observations, _, _, _, infos = game.step(
                {"left": chaser(observations["left"]), "right": champion(observations["right"])}
            )
        won += infos["right"]["winner"] == "right"
    assert won >= 18  # the champion beats chaser in 95.5-100% of games (benchmarks/RESULTS.md)
    batch = np.stack([observations["left"]] * 3)
    assert policy("chaser", **ballenvs.SUMO_RULES)(batch).shape == (3,)
    from ballenvs.duel.observe import StateObserver, state_of_view
    from ballenvs.duel.two_player_game import TwoPlayerDuel

    duel = TwoPlayerDuel(4, obs_type="state", **ballenvs.SUMO_RULES)
    duel.reset([np.random.default_rng(k) for k in range(4)])
    observer, view = StateObserver(duel.physics, duel.clock), duel.view(LEFT, duel.clock)
    np.testing.assert_allclose(observer.states_of(observer.observe(view, np)), state_of_view(view), atol=1e-6)
