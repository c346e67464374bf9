"""Play built-in (or learned) players against each other, many games at once.

    python -m ballenvs.duel.match pusher random --games 200           # one pairing's rates
    python -m ballenvs.duel.match --round-robin --env BallSumo-v0      # every built-in against every other, the planner aside
    python -m ballenvs.duel.match planner lookahead:anchor --env BallSumo-v0 --both-sides

The README's figures come from here.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ballenvs.duel.core import LEFT, RIGHT
from ballenvs.duel.game import DEFAULT_GAME_STEPS, DRAW, DUEL_OPTIONS, LEFT_WINS, PLAYING, RIGHT_WINS, TwoPlayerDuel
from ballenvs.duel.players import BUILTIN_PLAYERS, YARDSTICK_PLAYERS, make_player


def match_results(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_episode_steps: int = 1000, **duel_options: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``games`` games of ``left`` against ``right``, all at once: each game's outcome code
    (see :data:`ballenvs.duel.game.WINNER_NAMES`; PLAYING for one stopped by the time limit) and
    its length in steps. ``duel_options``: those of :class:`TwoPlayerDuel` (state observations
    unless said)."""
    duel = TwoPlayerDuel(games, **{"obs_type": "state", **duel_options})
    players = {side: make_player(spec, duel.physics, duel.rules) for side, spec in ((LEFT, left), (RIGHT, right))}
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(games)]
    duel.reset(rngs)
    for player in players.values():
        player.reset(None)
    outcome = np.full(games, PLAYING)
    lengths = np.zeros(games, dtype=np.int64)
    running = np.ones(games, dtype=bool)
    while running.any():
        actions = {side: player.act(duel.seat(side, rngs, player)) for side, player in players.items()}
        _, terminated = duel.play(actions[LEFT], actions[RIGHT])
        # Finished games keep moving in the batch, but their outcome is frozen.
        outcome = np.where(running, duel.winner, outcome)
        lengths += running
        running &= ~(terminated | (duel.steps >= max_episode_steps))
    return outcome, lengths


def match_outcomes(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_episode_steps: int = 1000, **duel_options: Any
) -> np.ndarray:
    """Each game's outcome code of :func:`match_results`."""
    return match_results(left, right, games, seed, max_episode_steps, **duel_options)[0]


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


def time_limit(options: dict[str, Any]) -> int:
    """The step at which a game under these options reaches its time limit: the clock's (``game_steps``)
    where the time limit decides, else ``max_episode_steps``."""
    limit = options.get("max_episode_steps", DEFAULT_GAME_STEPS)
    if options.get("time_limit_rule") == "nearer_centre":
        limit = min(limit, options.get("game_steps", DEFAULT_GAME_STEPS))
    return limit


def play_pairs(first: Any, second: Any, games: int = 100, seed: int = 0, **options: Any) -> dict[str, Any]:
    """``games`` games between two players, half with each on the left, on the same seeded
    starts: how many each won (``first_wins``, ``second_wins``), how many were drawn (both out at
    once, or undecided at the time limit), how many reached the time limit (``time_outs``; on
    BallSumo-v0 the ball nearer the centre won those) and the games' mean length."""
    half = games // 2
    as_left, left_lengths = match_results(first, second, half, seed, **options)
    as_right, right_lengths = match_results(second, first, games - half, seed, **options)
    lengths = np.concatenate([left_lengths, right_lengths])
    first_wins = int(np.sum(as_left == LEFT_WINS) + np.sum(as_right == RIGHT_WINS))
    second_wins = int(np.sum(as_left == RIGHT_WINS) + np.sum(as_right == LEFT_WINS))
    return {
        "first_wins": first_wins,
        "second_wins": second_wins,
        "draws": games - first_wins - second_wins,
        "time_outs": int(np.sum(lengths >= time_limit(options))),
        "mean_length": float(lengths.mean()),
    }


def registered_options(env_id: str) -> dict[str, Any]:
    """The game options and time limit a BallDuel id registers (``BallSumo-v0``'s rules)."""
    import gymnasium as gym

    import ballenvs  # noqa: F401  (registers the ids)

    spec = gym.spec(env_id)
    options = {key: value for key, value in spec.kwargs.items() if key in DUEL_OPTIONS}
    return {**options, "max_episode_steps": spec.max_episode_steps}


def round_robin(players: Sequence[Any], games: int = 200, seed: int = 0, **options: Any) -> list[dict[str, Any]]:
    """Every player against every other (:func:`play_pairs`): the first's wins, draws and losses."""
    rows = []
    for first, second in itertools.combinations(players, 2):
        pair = play_pairs(first, second, games, seed, **options)
        rows.append(
            {"first": first, "second": second, "wins": pair["first_wins"], "draws": pair["draws"]}
            | {"losses": pair["second_wins"], "time_outs": pair["time_outs"], "mean_length": pair["mean_length"]}
        )
    return rows


def round_robin_table(rows: list[dict[str, Any]]) -> str:
    """The rows of :func:`round_robin` as a Markdown table."""
    lines = [
        "| first | second | wins | draws | losses | time-outs | mean length |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = (r["first"], r["second"], r["wins"], r["draws"], r["losses"], r["time_outs"], f"{r['mean_length']:.0f}")
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines)


#: A command line's name for the search exploiter planning against a built-in as its model of the
#: opponent: ``lookahead:anchor`` (ballenvs.duel.search.Lookahead).
LOOKAHEAD = "lookahead:"


def command_line_player(spec: str, env_id: str) -> Any:
    """A player a command line names for ``env_id``'s game: a built-in player, or
    ``lookahead:NAME``, the game's search exploiter with the built-in NAME as its model of the
    opponent (the planner aside: simulating its every plan takes hours)."""
    if spec in BUILTIN_PLAYERS:
        return spec
    model = spec[len(LOOKAHEAD) :] if spec.startswith(LOOKAHEAD) else None
    if model not in YARDSTICK_PLAYERS:
        raise ValueError(
            f"player {spec!r}: valid: {', '.join(BUILTIN_PLAYERS)}, or {LOOKAHEAD}NAME with NAME one of "
            f"{', '.join(YARDSTICK_PLAYERS)}"
        )
    from ballenvs.duel.reference import DuelArena  # it imports this module

    arena = DuelArena(env_id)
    return arena.search_exploiter(arena.make_player(model, {}), {}, seed=0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ballenvs.duel.match", description="Win rates of BallDuel's built-in players against each other."
    )
    players = f"a built-in player ({', '.join(BUILTIN_PLAYERS)}) or {LOOKAHEAD}NAME (a search player modelling NAME)"
    parser.add_argument("left", nargs="?", help=players)
    parser.add_argument("right", nargs="?", help=players)
    parser.add_argument(
        "--round-robin", action="store_true", help="every built-in player against every other (the planner aside: name it)"
    )
    parser.add_argument("--env", default="BallDuel-v0", choices=("BallDuel-v0", "BallSumo-v0"), help="whose rules")
    parser.add_argument("--games", type=int, default=200, help="games per pairing (half from each side in a round robin)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--both-sides", action="store_true", help="two players: half the games from each side")
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error(f"--games must be >= 2, got {args.games}")
    options = registered_options(args.env)
    if args.round_robin:
        if args.left or args.right:
            parser.error("--round-robin plays every built-in player: name no players")
        print(f"{args.env}, {args.games} games a pairing (half from each side), seed {args.seed}; the first's results:")
        print(round_robin_table(round_robin(YARDSTICK_PLAYERS, args.games, args.seed, **options)))
        return
    if not (args.left and args.right):
        parser.error("name two players (LEFT RIGHT), or use --round-robin")
    try:
        left, right = (command_line_player(spec, args.env) for spec in (args.left, args.right))
    except ValueError as error:
        parser.error(str(error))
    if args.both_sides:
        pair = play_pairs(left, right, args.games, args.seed, **options)
        print(
            f"{args.left} vs {args.right} over {args.games} games, half from each side: {args.left} won "
            f"{pair['first_wins']}, {args.right} {pair['second_wins']}, drawn {pair['draws']} "
            f"({pair['time_outs']} decided at the time limit)"
        )
        return
    rates = play_matches(left, right, args.games, args.seed, **options)
    print(f"{args.left} vs {args.right} over {args.games} games: " + ", ".join(f"{k} {v:.1%}" for k, v in rates.items()))


if __name__ == "__main__":
    main()
