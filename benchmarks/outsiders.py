"""Players of styles none of BallDuel's built-ins has, as a held-out test of robustness.

    python -m benchmarks.outsiders [PLAYER] [--games 200] [--env BallSumo-v0] [--only NAME ...]
    python -m benchmarks.outsiders runs/ppo/BallSumo-v0_1/final_model.pt   # a trained model

Written after the planner's settings were chosen and never used to choose them: a player tuned
against the built-ins meets these as it would meet players written outside this repository.
Each plays ``--games`` games against PLAYER (a built-in name, default ``planner``, or a model
file or run folder of ours, which plays through its own observation and frame stack), half from
each side, on the same seeded starts as ``ballenvs.duel.match``. Every one is a few lines over
the side's view (own ball, the other's, the clock), in its own frame.
"""

from __future__ import annotations

import sys
from contextlib import closing
from typing import Any

import numpy as np

from agents.common.errors import UsageError
from agents.environments.ids import check_two_player_env
from agents.session.cli import Parser, run_cli
from agents.session.console import Console, counting_from
from ballenvs.directions import heading_to_action
from ballenvs.duel.heuristics import Anchor, Chaser
from ballenvs.duel.roster import BUILTIN_PLAYERS
from ballenvs.duel.tournament import play_pairs, registered_options
from ballenvs.game import Player, Seat
from benchmarks.common import check_ranges, progress_flag

# Memoryless built-ins whose moves the outsiders mix: home to the centre, braking, and a charge.
HOME, CHARGE = Anchor(), Chaser()


class Interposer(Player):
    """Sits a little inside the other ball, on its line to the centre, braking."""

    def act(self, seat: Seat) -> Any:
        v, xp = seat.view, seat.xp
        norm = xp.maximum(xp.sqrt(v.other_x**2 + v.other_y**2), 1e-9)
        reach = xp.minimum(0.15, norm * 0.5) / norm
        return heading_to_action(xp, v.other_x * reach - v.own_x - 6 * v.own_vx, v.other_y * reach - v.own_y - 6 * v.own_vy)


class Rammer(Player):
    """Charges at where the other ball will be in 6 steps; heads home past 0.7 ring radii."""

    def act(self, seat: Seat) -> Any:
        v, xp = seat.view, seat.xp
        near_edge = v.own_x**2 + v.own_y**2 > 0.7**2
        charge = heading_to_action(xp, v.other_x + 6 * v.other_vx - v.own_x, v.other_y + 6 * v.other_vy - v.own_y)
        return xp.where(near_edge, HOME.act(seat), charge)


class ClockWatcher(Player):
    """Holds the centre; charges when it is the further out with under 40% of the game left."""

    def act(self, seat: Seat) -> Any:
        v, xp = seat.view, seat.xp
        time_left = 1.0 if v.time_left is None else v.time_left
        charge = (v.own_x**2 + v.own_y**2 > v.other_x**2 + v.other_y**2) & (time_left < 0.4)
        return xp.where(charge, CHARGE.act(seat), HOME.act(seat))


class Feinter(Player):
    """Holds the centre for 10 steps, charges for 5, and again."""

    def __init__(self) -> None:
        self.steps = 0

    def reset(self, games: np.ndarray | None) -> None:
        if games is None:
            self.steps = 0

    def act(self, seat: Seat) -> Any:
        self.steps += 1
        return (CHARGE if self.steps % 15 >= 10 else HOME).act(seat)


class LeadChaser(Player):
    """Chases the other ball with its own velocity allowed for, so it brakes as it arrives."""

    def act(self, seat: Seat) -> Any:
        v, xp = seat.view, seat.xp
        return heading_to_action(xp, v.other_x - v.own_x - 4 * v.own_vx, v.other_y - v.own_y - 4 * v.own_vy)


class CoinToss(Player):
    """Each step anchor's move or chaser's, by a coin of its own (seeded)."""

    def __init__(self, seed: int = 123) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, seat: Seat) -> Any:
        chase = self.rng.random(np.shape(seat.view.own_x)) < 0.5
        return seat.xp.where(chase, CHARGE.act(seat), HOME.act(seat))


class Shover(Player):
    """Holds the centre; when the other ball is within 0.35 ring radii, shoves it outward."""

    def act(self, seat: Seat) -> Any:
        v, xp = seat.view, seat.xp
        to_x, to_y = v.other_x - v.own_x, v.other_y - v.own_y
        close = to_x * to_x + to_y * to_y < 0.35**2
        home_x, home_y = -v.own_x - 5 * v.own_vx, -v.own_y - 5 * v.own_vy  # anchor's, braking less
        return heading_to_action(
            xp, xp.where(close, to_x + 0.5 * v.other_x, home_x), xp.where(close, to_y + 0.5 * v.other_y, home_y)
        )


OUTSIDERS: dict[str, type[Player]] = {
    "interposer": Interposer,
    "rammer": Rammer,
    "clockwatcher": ClockWatcher,
    "feinter": Feinter,
    "leadchaser": LeadChaser,
    "cointoss": CoinToss,
    "shover": Shover,
}


def player_of(argument: str, env_id: str) -> tuple[str, Any]:
    """A built-in player by name, or a model of ``env_id``'s game (a model file, or a run folder's
    final model), read as agents.exploit reads its target, with the name the tables give it; anything
    else is one line."""
    from agents.twoplayer.ratings import entrants_of, make_entrant_player, model_env_id

    [entrant] = entrants_of(argument, BUILTIN_PLAYERS)[-1:]  # a run folder: its final model
    trained_on = model_env_id(entrant)
    if trained_on is None:
        return argument, argument
    if trained_on != env_id:
        raise UsageError(f"player {argument!r}: a model of {trained_on}, not of --env {env_id}")
    return entrant.name, make_entrant_player(entrant, "cpu", env_id, {})


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = Parser(prog="python -m benchmarks.outsiders", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "player", nargs="?", default="planner", help="a built-in player, or a model file or run folder (default: planner)"
    )
    parser.add_argument("--games", type=int, default=200, help="games against each (half from each side)")
    parser.add_argument("--env", default="BallSumo-v0", help="whose rules")
    parser.add_argument("--only", nargs="+", choices=list(OUTSIDERS), default=list(OUTSIDERS))
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_two_player_env(args.env)
    check_ranges([("--games", args.games, (2, 1_000_000))])
    name_of_player, player = player_of(args.player, args.env)
    options = registered_options(args.env)
    rows = []
    with closing(Console(len(args.only) * args.games, unit="game", enabled=not args.no_progress)) as console:
        console.write(f"{name_of_player} against the outsiders on {args.env}, {args.games} games each, half from each side")
        console.write(
            f"| outsider | {name_of_player} wins | draws | {name_of_player} losses | decided at the clock | win rate |"
        )
        console.write("|---|---:|---:|---:|---:|---:|")
        for k, name in enumerate(args.only):
            on_step = counting_from(console.update, k * args.games)
            pair = play_pairs(player, OUTSIDERS[name](), args.games, 0, on_step=on_step, **options)
            rows.append({"outsider": name, **pair})
            wins, draws, losses = pair["first_wins"], pair["draws"], pair["second_wins"]
            console.write(f"| {name} | {wins} | {draws} | {losses} | {pair['time_outs']} | {wins / args.games:.1%} |")
    return rows


if __name__ == "__main__":
    sys.exit(run_cli(main))
