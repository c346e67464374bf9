"""Play built-in (or learned) players against each other, many games at once.

``python -m ballenvs.duel.match pusher random --games 200`` prints the win rates; the README's
figures come from here.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ballenvs.duel.core import LEFT
from ballenvs.duel.game import DRAW, LEFT_WINS, PLAYING, RIGHT_WINS, DuelGame
from ballenvs.duel.observe import side_view
from ballenvs.duel.opponents import BUILTIN_OPPONENTS, make_player


def play_matches(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_steps: int = 1000, obs_type: str = "state"
) -> dict[str, float]:
    """Play ``games`` games of ``left`` against ``right``, all at once; return outcome rates."""
    game = DuelGame(games, obs_type=obs_type, opponent=right, max_steps=max_steps)
    left_player = make_player(left, game.physics)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(games)]
    game.reset_games(rngs)
    outcome = np.full(games, PLAYING)
    running = np.ones(games, dtype=bool)
    while running.any():
        actions = left_player.act(side_view(game.core.state, LEFT), game.xp, lambda: game.observe(LEFT), rngs)
        _, terminated, truncated, winner = game.step(actions, rngs)
        # Finished games keep moving in the batch, but their outcome is frozen.
        outcome = np.where(running, winner, outcome)
        running &= ~(terminated | truncated)
    return {
        "left_wins": float(np.mean(outcome == LEFT_WINS)),
        "right_wins": float(np.mean(outcome == RIGHT_WINS)),
        "draws": float(np.mean(outcome == DRAW)),
        "unfinished": float(np.mean(outcome == PLAYING)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Win rates of one BallDuel player against another.")
    parser.add_argument("left", choices=BUILTIN_OPPONENTS)
    parser.add_argument("right", choices=BUILTIN_OPPONENTS)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rates = play_matches(args.left, args.right, args.games, args.seed)
    print(f"{args.left} vs {args.right} over {args.games} games: " + ", ".join(f"{k} {v:.1%}" for k, v in rates.items()))


if __name__ == "__main__":
    main()
