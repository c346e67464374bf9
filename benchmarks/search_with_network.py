"""Expert iteration's first question: does a learned network make the planner's search stronger?

    python -m benchmarks.search_with_network MODEL [--games 40] [--searches planner lookahead model leaf:0.3]

MODEL (a model file or run folder of a BallSumo-v0 state learner: a student of the planner, a
self-play run) is put into the search in one of three places (Anthony et al. 2017's Expert
Iteration and AlphaZero use the network inside the search that teaches it), and each search
plays ``--games`` games against the built-in planner, half from each side, on seeded starts:

- ``planner``: the planner itself, the yardstick (two equal planners split their games);
- ``lookahead``: the search exploiter's search (:class:`ballenvs.duel.search.Lookahead`) with the
  network as its model of the opponent: a student of the planner as the planner's model;
- ``model``: the planner with the network among the players its branches meet, in the champion's
  place (as many models as the planner's: the same work a decision);
- ``leaf:W``: the planner scoring a branch still running at its end by the network's value there
  (its greedy Q-value, clipped to [-1, 1]), mixed with weight W into the balls' distances;
- ``prior:K``: the network as an action prior: the planner's own branches for the network's K
  best actions only, each held for more horizons (:data:`PRIOR_HORIZONS`: as many branches as
  the planner's 27 for K = 3), every branch meeting the planner's replies and models as its own do.

Beside each search's wins it prints how many starts each side won from both sides (the rest the
seat split), and the milliseconds a decision of each side, timed in the same games (a call
decides every game of its batch): the goal asks the search to beat the planner at no more time
a decision.
"""

from __future__ import annotations

import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from agents.artifacts.model_players import arena_of
from agents.common.errors import UsageError
from agents.session.cli import Parser, run_cli
from agents.session.console import Console, counting_from
from agents.twoplayer.ratings import entrants_of, make_entrant_player
from ballenvs.directions import N_ACTIONS
from ballenvs.duel.search import PLANNER_MEAN_WEIGHT, Planner, played_by, seat_view
from ballenvs.game import Player, Seat
from benchmarks.common import check_ranges, progress_flag, write_json

ENV_ID = "BallSumo-v0"
SEARCHES = ("planner", "lookahead", "model", "leaf:W", "prior:K")
#: The holds of a ``prior:K`` search's branches: the planner's (3, 8, 16) and six between and past them.
PRIOR_HORIZONS = (2, 3, 5, 8, 12, 16, 20, 25, 30)


class Timed(Player):
    """A player whose decisions are timed: the seconds and the calls of its ``act``."""

    def __init__(self, player: Player) -> None:
        self.player, self.seconds, self.calls = player, 0.0, 0

    def act(self, seat: Seat) -> Any:
        start = time.perf_counter()
        actions = self.player.act(seat)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return actions

    def reset(self, games: np.ndarray | None) -> None:
        self.player.reset(games)

    def ms_a_decision(self) -> float:
        return 1000 * self.seconds / max(self.calls, 1)


def leaf_weight(search: str) -> float | None:
    """W of ``leaf:W`` (None for the other searches); a bad W is refused naming it."""
    if not search.startswith("leaf:"):
        return None
    try:
        weight = float(search[len("leaf:") :])
    except ValueError:
        weight = -1.0
    if not 0 < weight <= 1:
        raise UsageError(f"--searches {search!r}: leaf:W takes a weight W in (0, 1]")
    return weight


def prior_width(search: str) -> int | None:
    """K of ``prior:K`` (None for the other searches); a bad K is refused naming it."""
    if not search.startswith("prior:"):
        return None
    width = search[len("prior:") :]
    if not width.isdigit() or not 1 <= int(width) <= N_ACTIONS:
        raise UsageError(f"--searches {search!r}: prior:K takes a number of actions K in 1..{N_ACTIONS}")
    return int(width)


class PriorPlanner(Planner):
    """The planner searching only the ``width`` actions ``network`` values most in each game, each
    held for every one of ``horizons``; its replies and models are the planner's."""

    def __init__(self, planner: Planner, network: Any, width: int, horizons: tuple[int, ...] = PRIOR_HORIZONS) -> None:
        super().__init__(planner.branches.options, models=planner.models)
        self.network, self.width, self.horizons = network, width, tuple(horizons)

    def act(self, seat: Seat) -> Any:
        self.network.reset(None)
        values = np.atleast_2d(self.network.act_with_values(seat)[1])
        best = np.argsort(-values, axis=1, kind="stable")[:, : self.width]  # (games, K)
        actions = np.tile(best, (1, len(self.horizons)))  # branch k holds its action for horizons[k // K]
        holds = np.broadcast_to(np.repeat(self.horizons, self.width), actions.shape)
        view, time_left = seat_view(seat)
        games, replies = len(view[0]), len(self.actions)  # every branch meets the planner's own 27 replies
        count = actions.shape[1]
        pair_actions, pair_holds = np.repeat(actions, replies, axis=1), np.repeat(holds, replies, axis=1)
        reply_actions, reply_holds = np.tile(self.actions, count * games), np.tile(self.holds, count * games)
        back_to_centre = self.branches.continuation

        def hold_and_return(t: int, replying: Seat) -> Any:
            return np.where(t < reply_holds, reply_actions, back_to_centre.act(replying))

        outcomes = [self.branches.scores(view, time_left, pair_actions, pair_holds, hold_and_return)]
        for model in self.models:
            model.reset(None)
            outcomes.append(self.branches.scores(view, time_left, actions, holds, played_by(model))[:, :, None])
        table = np.concatenate([outcomes[0].reshape(games, count, replies), *outcomes[1:]], axis=2)
        value = table.min(axis=2) + PLANNER_MEAN_WEIGHT * table.mean(axis=2)
        chosen = actions[np.arange(games), value.argmax(axis=1)].astype(np.int64)
        return int(chosen[0]) if np.ndim(seat.view[0]) == 0 else chosen


def make_search(search: str, network: Any, arena: Any) -> Player:
    """One of :data:`SEARCHES` with ``network`` (a :class:`agents.artifacts.model_players.QPlayer`) in it."""
    planner = arena.make_player("planner", {})
    if search == "planner":
        return planner
    if search == "lookahead":
        return arena.search_exploiter(network, {}, 0)
    options = arena.options({})
    if search == "model":
        return planner.meeting(network)
    width = prior_width(search)
    if width is not None:
        return PriorPlanner(planner, network, width)
    weight = leaf_weight(search)
    assert weight is not None, search  # main checked the names

    def value(seat: Seat) -> np.ndarray:
        network.reset(None)
        return network.act_with_values(seat)[1].max(axis=1)

    return Planner(options, models=planner.models, leaf_value=value, leaf_weight=weight)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = Parser(prog="python -m benchmarks.search_with_network", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help=f"a model file or run folder of a {ENV_ID} state learner")
    parser.add_argument("--games", type=int, default=40, help="games of each search against the planner (half from each side)")
    parser.add_argument(
        "--searches", nargs="+", default=["planner", "lookahead", "model", "leaf:0.3"], help=", ".join(SEARCHES)
    )
    parser.add_argument("--seed", type=int, default=0, help="the starts' seed")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--games", args.games, (2, 1_000_000)), ("--seed", args.seed, (0, 2**31))])
    for search in args.searches:
        if search not in SEARCHES[:-2] and leaf_weight(search) is None and prior_width(search) is None:
            raise UsageError(f"--searches {search!r}: valid: {', '.join(SEARCHES)}")
    if not Path(args.model).exists():
        raise UsageError(f"{args.model!r}: no such model file or run folder (the network to search with)")
    [entrant] = entrants_of(args.model, ())[-1:]  # a run folder: its final model
    network = make_entrant_player(entrant, "cpu", ENV_ID, {})
    arena = arena_of(ENV_ID)
    rows = []
    with closing(Console(len(args.searches) * args.games, unit="game", enabled=not args.no_progress)) as console:
        console.write(
            f"searches with {entrant.name} against the planner on {ENV_ID}, {args.games} games each, half from each side"
        )
        console.write(
            "| search | wins | draws | losses | decided at the clock | win rate | starts won from both sides "
            "(the planner's) | ms a decision | the planner's |"
        )
        console.write("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k, search in enumerate(args.searches):
            ours, planner = Timed(make_search(search, network, arena)), Timed(arena.make_player("planner", {}))
            on_step = counting_from(console.update, k * args.games)
            pair = arena.play_pairs(ours, planner, args.games, args.seed, {}, on_step)
            wins, draws, losses = pair["first_wins"], pair["draws"], pair["second_wins"]
            row = {"search": search, **pair, "ms_a_decision": ours.ms_a_decision(), "planner_ms": planner.ms_a_decision()}
            rows.append(row)
            console.write(
                f"| {search} | {wins} | {draws} | {losses} | {pair['time_outs']} | {wins / args.games:.1%} "
                f"| {pair['first_won_both']} of {pair['starts']} ({pair['second_won_both']}) "
                f"| {row['ms_a_decision']:.1f} | {row['planner_ms']:.1f} |"
            )
    write_json("search_with_network", {"model": str(args.model), "games": args.games, "seed": args.seed, "rows": rows})
    return rows


if __name__ == "__main__":
    sys.exit(run_cli(main))
