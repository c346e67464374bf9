"""Play built-in (or learned) players against each other, many games at once.

    python -m ballenvs.duel.match pusher random --games 200           # one pairing's rates
    python -m ballenvs.duel.match --round-robin --env BallSumo-v0      # every built-in against every other, the planner aside
    python -m ballenvs.duel.match planner lookahead:anchor --env BallSumo-v0 --both-sides

The README's figures come from here; the matches themselves are :mod:`ballenvs.duel.tournament`.
"""

from __future__ import annotations

import sys
from typing import Any

from ballenvs.cli import MAX_GAMES, MAX_SEED, Parser, bounded, run
from ballenvs.duel.champion import played_as
from ballenvs.duel.reference import DuelArena
from ballenvs.duel.roster import BUILTIN_PLAYERS, PLANNER_VARIANT, YARDSTICK_PLAYERS, is_player
from ballenvs.duel.tournament import play_matches, play_pairs, registered_options, round_robin, round_robin_table

#: A command line's name for the search exploiter planning against a built-in as its model of the
#: opponent: ``lookahead:anchor`` (ballenvs.duel.search.Lookahead).
LOOKAHEAD = "lookahead:"


def command_line_player(spec: str, env_id: str) -> Any:
    """A player a command line names for ``env_id``'s game: a built-in player, a planner with holds
    of its own (``planner:2/5/10/20``), or ``lookahead:NAME``, the game's search exploiter with the
    built-in NAME as its model of the opponent (the planner aside: simulating its every plan takes
    hours)."""
    if is_player(spec):  # a bad planner:H/H/... is refused here, naming the valid holds
        return spec
    model = spec[len(LOOKAHEAD) :] if spec.startswith(LOOKAHEAD) else None
    if model not in YARDSTICK_PLAYERS:
        raise ValueError(
            f"player {spec!r}: valid: {', '.join(BUILTIN_PLAYERS)}, {PLANNER_VARIANT}H/H/... (the planner holding its "
            f"actions H steps), or {LOOKAHEAD}NAME with NAME one of {', '.join(YARDSTICK_PLAYERS)}"
        )
    arena = DuelArena(env_id)
    return arena.search_exploiter(arena.make_player(model, {}), {}, seed=0)


def _played(row: dict[str, Any], k: int, pairs: int) -> None:
    print(f"  pair {k}/{pairs}: {row['first']} against {row['second']}: {row['wins']} wins", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = Parser(
        prog="python -m ballenvs.duel.match", description="Win rates of BallDuel's built-in players against each other."
    )
    players = (
        f"a built-in player ({', '.join(BUILTIN_PLAYERS)}), {PLANNER_VARIANT}H/H/... (the planner holding its actions H "
        f"steps) or {LOOKAHEAD}NAME (a search player modelling NAME)"
    )
    parser.add_argument("left", nargs="?", help=players)
    parser.add_argument("right", nargs="?", help=players)
    parser.add_argument(
        "--round-robin", action="store_true", help="every built-in player against every other (the planner aside: name it)"
    )
    parser.add_argument("--env", default="BallDuel-v0", choices=("BallDuel-v0", "BallSumo-v0"), help="whose rules")
    parser.add_argument(
        "--games", type=bounded(2, MAX_GAMES), default=200, help="games per pairing (half from each side in a round robin)"
    )
    parser.add_argument("--seed", type=bounded(0, MAX_SEED), default=0)
    parser.add_argument("--both-sides", action="store_true", help="two players: half the games from each side")
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress lines (the round robin's pairs as they finish)"
    )
    args = parser.parse_args(argv)
    options = registered_options(args.env)
    if args.round_robin:
        if args.left or args.right:
            parser.error("--round-robin plays every built-in player: name no players")
        print(f"{args.env}, {args.games} games a pairing (half from each side), seed {args.seed}; the first's results:")
        rows = round_robin(YARDSTICK_PLAYERS, args.games, args.seed, None if args.no_progress else _played, **options)
        print(round_robin_table(rows))
        return
    if not (args.left and args.right):
        parser.error("name two players (LEFT RIGHT), or use --round-robin")
    try:
        left, right = (command_line_player(spec, args.env) for spec in (args.left, args.right))
    except ValueError as error:
        parser.error(str(error))
    first, second = played_as(args.left), played_as(args.right)  # an alias says the version it played
    if args.both_sides:
        pair = play_pairs(left, right, args.games, args.seed, **options)
        print(
            f"{first} vs {second} over {args.games} games, half from each side: {args.left} won "
            f"{pair['first_wins']}, {args.right} {pair['second_wins']}, drawn {pair['draws']} "
            f"({pair['time_outs']} decided at the time limit); of its {pair['starts']} starts, each played from both "
            f"sides, {args.left} won {pair['first_won_both']} from both, {args.right} {pair['second_won_both']}"
        )
        return
    rates = play_matches(left, right, args.games, args.seed, **options)
    print(f"{first} vs {second} over {args.games} games: " + ", ".join(f"{k} {v:.1%}" for k, v in rates.items()))


if __name__ == "__main__":
    sys.exit(run(main))
