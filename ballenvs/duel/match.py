"""Play built-in (or learned) players against each other, many games at once.

``python -m ballenvs.duel.match pusher random --games 200`` prints the win rates; the README's
figures come from here.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ballenvs.duel.core import LEFT, RIGHT
from ballenvs.duel.game import DRAW, LEFT_WINS, PLAYING, RIGHT_WINS, TwoPlayerDuel
from ballenvs.duel.observe import side_view
from ballenvs.duel.players import BUILTIN_PLAYERS, make_player
from ballenvs.game import Seat


def match_outcomes(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_episode_steps: int = 1000, **duel_options: Any
) -> np.ndarray:
    """Play ``games`` games of ``left`` against ``right``, all at once; each game's outcome code
    (see :data:`ballenvs.duel.game.WINNER_NAMES`; PLAYING for one stopped by the time limit).
    ``duel_options``: those of :class:`TwoPlayerDuel` (state observations unless said)."""
    duel = TwoPlayerDuel(games, **{"obs_type": "state", **duel_options})
    players = {side: make_player(spec, duel.physics) for side, spec in ((LEFT, left), (RIGHT, right))}
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(games)]
    duel.reset(rngs)
    for player in players.values():
        player.reset(None)
    outcome = np.full(games, PLAYING)
    running = np.ones(games, dtype=bool)
    while running.any():
        actions = {
            side: player.act(Seat(side_view(duel.core.state, side), duel.xp, lambda side=side: duel.observe(side), rngs))
            for side, player in players.items()
        }
        _, terminated = duel.play(actions[LEFT], actions[RIGHT])
        # Finished games keep moving in the batch, but their outcome is frozen.
        outcome = np.where(running, duel.winner, outcome)
        running &= ~(terminated | (duel.steps >= max_episode_steps))
    return outcome


def play_matches(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_episode_steps: int = 1000, **duel_options: Any
) -> dict[str, float]:
    """The outcome rates of :func:`match_outcomes`."""
    outcome = match_outcomes(left, right, games, seed, max_episode_steps, **duel_options)
    return {
        "left_wins": float(np.mean(outcome == LEFT_WINS)),
        "right_wins": float(np.mean(outcome == RIGHT_WINS)),
        "draws": float(np.mean(outcome == DRAW)),
        "unfinished": float(np.mean(outcome == PLAYING)),
    }


def play_pairs(first: Any, second: Any, games: int = 100, seed: int = 0, **options: Any) -> dict[str, int]:
    """``games`` games between two players, half with each on the left, on the same seeded
    starts: how many each won, and how many were drawn (both out at once, or the time limit)."""
    half = games // 2
    as_left = match_outcomes(first, second, half, seed, **options)
    as_right = match_outcomes(second, first, games - half, seed, **options)
    first_wins = int(np.sum(as_left == LEFT_WINS) + np.sum(as_right == RIGHT_WINS))
    second_wins = int(np.sum(as_left == RIGHT_WINS) + np.sum(as_right == LEFT_WINS))
    return {"first_wins": first_wins, "second_wins": second_wins, "draws": games - first_wins - second_wins}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ballenvs.duel.match", description="Win rates of one BallDuel player against another."
    )
    parser.add_argument("left", choices=BUILTIN_PLAYERS)
    parser.add_argument("right", choices=BUILTIN_PLAYERS)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rates = play_matches(args.left, args.right, args.games, args.seed)
    print(f"{args.left} vs {args.right} over {args.games} games: " + ", ".join(f"{k} {v:.1%}" for k, v in rates.items()))


if __name__ == "__main__":
    main()
