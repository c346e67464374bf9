"""The built-in players of BallDuel by name, the one place that knows them all: the scripted
heuristics (:mod:`ballenvs.duel.heuristics`), the learned champions (:mod:`ballenvs.duel.champion`) and
the planner (:mod:`ballenvs.duel.search`), which is given the players its branches meet as objects.
Above them all in the imports: nothing they import reaches back here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ballenvs.duel.champion import VERSIONS as CHAMPION_VERSIONS
from ballenvs.duel.champion import WEIGHTS as CHAMPION_WEIGHTS
from ballenvs.duel.champion import Champion
from ballenvs.duel.heuristics import (
    Anchor,
    Chaser,
    PolicyPlayer,
    Pusher,
    RandomPlayer,
    Sprinter,
    Still,
    physics_options,
)
from ballenvs.duel.physics import DuelPhysics
from ballenvs.duel.search import PLANNER_HORIZONS, PLANNER_MODELS, Planner
from ballenvs.game import Player

#: The built-in players written by hand that react to what they see (the champions were learned,
#: the planner searches).
SCRIPTED_PLAYERS = ("still", "random", "chaser", "pusher", "anchor", "sprinter")
#: The built-in players the tools play one after another (yardsticks, evaluations against every
#: built-in, self-play's evaluations): the scripts, the champion and the first one, which the
#: issues' goals name.
YARDSTICK_PLAYERS = (*SCRIPTED_PLAYERS, "champion", "dqn_champion")
#: Every built-in player. Played only where named: the second champion (the champion plays it
#: level, the seat deciding, and it adds nothing a yardstick does not), and the planner, which
#: simulates thousands of branches every step (milliseconds a step per game).
BUILTIN_PLAYERS = (*YARDSTICK_PLAYERS, "ppo_champion", "planner")
#: The players at the planner's level: measures of a learner from nothing, never what trains it.
#: Evaluations report them; the score that keeps a run's best model leaves them out.
HELD_OUT_PLAYERS = ("champion", "ppo_champion", "planner")
#: The planner holding its actions for steps of one's choosing: ``planner:2/5/10/20`` (the built-in
#: planner's are ``planner:3/8/16``), a stronger teacher against pusher at twice its time a step
#: (benchmarks/RESULTS.md, The planner).
PLANNER_VARIANT = "planner:"
MAX_PLANNER_HOLD = 100


def planner_holds(spec: Any) -> tuple[int, ...] | None:
    """The holds of the planner ``spec`` names, shortest first: the built-in planner's for
    ``planner``, H, H, ... for ``planner:H/H/...``; None for any other spec. A spec with that prefix
    and bad holds is refused, naming it and the valid form."""
    if not isinstance(spec, str):
        return None
    if spec == "planner":
        return PLANNER_HORIZONS
    if not spec.startswith(PLANNER_VARIANT):
        return None
    words = spec[len(PLANNER_VARIANT) :].split("/")
    # isdigit alone takes "²", which int refuses; "5/05" holds 5 twice.
    holds = [int(word) for word in words if word.isascii() and word.isdigit()]
    if len(holds) < len(words) or not all(1 <= hold <= MAX_PLANNER_HOLD for hold in holds) or len(set(holds)) < len(holds):
        raise ValueError(
            f"player {spec!r}: {PLANNER_VARIANT}H/H/... takes different holds H, whole numbers of steps in "
            f"1..{MAX_PLANNER_HOLD} (the built-in planner's: {PLANNER_VARIANT}{'/'.join(map(str, PLANNER_HORIZONS))})"
        )
    return tuple(sorted(holds))


def is_player(spec: Any) -> bool:
    """Whether ``spec`` names a player of the roster: a built-in one (a champion by its version's name
    too, ``champion-v1``), or a planner with its own holds (a bad one is refused, as
    :func:`planner_holds` says)."""
    return spec in BUILTIN_PLAYERS or spec in CHAMPION_VERSIONS or planner_holds(spec) is not None


def make_planner(
    duel_options: Mapping[str, Any], horizons: Sequence[int] = PLANNER_HORIZONS, models: Sequence[str] = PLANNER_MODELS
) -> Planner:
    """The built-in ``planner`` under ``duel_options``, its branches meeting the built-in players
    named in ``models`` (each a yardstick player: not itself)."""
    unknown = [name for name in models if name not in YARDSTICK_PLAYERS]
    if unknown:
        raise ValueError(f"planner models {unknown!r}: each must be one of {', '.join(YARDSTICK_PLAYERS)}")
    physics = DuelPhysics(
        **{key: duel_options[key] for key in ("ring_radius", "ball_radius", "floor_slope") if key in duel_options}
    )
    return Planner(duel_options, horizons, [make_player(name, physics) for name in models])


def make_player(
    spec: str | Any, physics: DuelPhysics, rules: Mapping[str, Any] | None = None, frame_space: Any = None
) -> Player:
    """A :class:`Player` from a built-in name, a model with ``predict`` or a callable. ``rules``:
    the game's options beyond its physics (``time_limit_rule``, ``game_steps``), which the
    planner simulates (none: no clock). ``frame_space``: the observation a side sees, which a
    model that says what it reads is fitted to (stacked, channels first) or refused for."""
    builtins: dict[str, Callable[[], Player]] = {
        "still": Still,
        "random": RandomPlayer,
        "chaser": Chaser,
        "pusher": lambda: Pusher(physics),
        "anchor": Anchor,
        "sprinter": lambda: Sprinter(physics),
        **{name: partial(Champion, physics, name) for name in CHAMPION_WEIGHTS},  # one per shipped weights file
    }
    if isinstance(spec, Player):
        return spec
    if isinstance(spec, str) and spec in builtins:
        return builtins[spec]()
    holds = planner_holds(spec)  # the built-in planner, or one with holds of its own
    if holds is not None:
        return make_planner({**physics_options(physics), **(rules or {})}, holds)
    if not isinstance(spec, str) and (hasattr(spec, "predict") or callable(spec)):
        return PolicyPlayer(spec, frame_space)
    raise ValueError(
        f"unknown opponent {spec!r}; valid: {', '.join(map(repr, BUILTIN_PLAYERS))}, "
        f"'{PLANNER_VARIANT}H/H/...' (the planner with holds of H steps), an object with predict(obs, deterministic=True), "
        "or a callable obs -> action"
    )
