"""The champions: learned BallSumo-v0 players shipped as built-in players.

- ``champion``: three rounds of our PPO from the state student of ``planner:2/5/10/20`` (seed 0,
  benchmarks/RESULTS.md, "PPO in rounds"): at least 95% against every script, level with the
  planner head to head.
- ``ppo_champion``: the second champion, one round of our PPO from the built-in planner's student
  (seed 0, pg5 in RESULTS, "our PPO from the same start"), shipped as ``champion`` from 2026-12-05
  to 2026-12-06.
- ``dqn_champion``: the first champion, our DQN's self-play (seed 1), shipped as ``champion``
  until 2026-12-05; the planner's branches meet it.

The earlier champions keep names of their own so that earlier results can be reproduced, and each
network has a name that never changes meaning, as an env id's version does (Gymnasium's rule: what
changes results changes the version): ``champion-v1`` (the DQN's), ``champion-v2`` (the second),
``champion-v3`` (today's). ``dqn_champion``, ``ppo_champion`` and ``champion`` are aliases of them;
``champion`` is the newest's, and moves when a new version ships. Every report that plays one says
which version it played (:func:`version_of`); tests/envs/test_ballsumo.py pins each file by its hash.

Each network (an MLP on the state vector with the clock) is stored as plain float32 arrays in an
.npz beside this file and run with numpy, so the player needs neither torch nor the agents package
(slimevolleygym ships its baseline the same way). It reads the balls and the clock from its seat's
view, whatever the learner on the other side sees, and plays BallDuel-v0 too (the clock then runs
over v0's 1000 steps). How they were made and how good they are: docs/two-players.md, "The
champion". ``python -m agents.export_champion`` writes a new one from a run.
"""

from __future__ import annotations

import importlib.resources
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ballenvs.backend import SCALAR
from ballenvs.directions import N_ACTIONS
from ballenvs.duel.observe import StateObserver
from ballenvs.duel.physics import DuelPhysics
from ballenvs.game import Player, Seat
from ballenvs.npz import NpzError, read_weights

#: Each shipped network's file beside this module, by the name that never changes meaning.
VERSIONS = {"champion-v1": "dqn_champion.npz", "champion-v2": "ppo_champion.npz", "champion-v3": "champion.npz"}
#: The names in use before the versions, each an alias of one; ``champion`` is the newest version's.
ALIASES = {"dqn_champion": "champion-v1", "ppo_champion": "champion-v2", "champion": "champion-v3"}
#: Each champion's weights file beside this module, by every name a player takes (aliases and versions).
WEIGHTS = {**{alias: VERSIONS[version] for alias, version in ALIASES.items()}, **VERSIONS}


def version_of(name: str) -> str:
    """The versioned name of a shipped champion (``champion`` -> ``champion-v3``); any other name as it is."""
    return ALIASES.get(name, name)


def played_as(name: str) -> str:
    """A player's name as a report says it: an alias with the version it played, ``champion (champion-v3)``."""
    return f"{name} ({ALIASES[name]})" if name in ALIASES else name


#: What the champion reads (the state vector with the clock) and chooses among (the 9 actions).
FEATURES, ACTIONS = len(StateObserver(DuelPhysics(), clock=True).high), N_ACTIONS
#: A champion file larger than this, or deeper, is refused (the shipped ones are 280 KB, 3 layers).
MAX_BYTES, MAX_LAYERS = 16 * 2**20, 16

Layers = tuple[tuple[np.ndarray, np.ndarray], ...]


def check_layers(layers: Layers, what: str) -> Layers:
    """``layers`` as a champion must have them: (weight, bias) pairs of finite float32, the first
    reading :data:`FEATURES` numbers, each the next's input, the last giving :data:`ACTIONS`
    Q-values; a :class:`ballenvs.npz.NpzError` naming ``what`` otherwise."""
    if not 1 <= len(layers) <= MAX_LAYERS:
        raise NpzError(f"{what}: {len(layers)} layers; a champion has 1 to {MAX_LAYERS}")
    inputs = FEATURES
    for k, (weight, bias) in enumerate(layers):
        if weight.ndim != 2 or bias.ndim != 1 or weight.shape[1] != inputs or bias.shape != weight.shape[:1]:
            raise NpzError(
                f"{what}: layer {k} has weight {weight.shape} and bias {bias.shape}; "
                f"it must read {inputs} numbers (weight (n, {inputs}), bias (n,))"
            )
        for name, array in (("weight", weight), ("bias", bias)):
            if not np.issubdtype(array.dtype, np.floating) or not np.isfinite(array).all():
                raise NpzError(f"{what}: layer {k}'s {name} must be finite floating-point numbers")
        inputs = weight.shape[0]
    if inputs != ACTIONS:
        raise NpzError(f"{what}: the last layer gives {inputs} values; a champion chooses among {ACTIONS} actions")
    return tuple((weight.astype(np.float32), bias.astype(np.float32)) for weight, bias in layers)


def read_champion(path: str | Path) -> Layers:
    """A champion's layers from an .npz written by ``python -m agents.export_champion``: the file
    read as every model file is (:func:`ballenvs.npz.read_weights`, within :data:`MAX_BYTES`),
    its layers checked (:func:`check_layers`)."""
    what = "champion file"
    label = f"cannot load {what} {str(path)!r}"
    arrays = read_weights(path, what, MAX_BYTES)
    count = arrays.get("layers")
    if count is None or count.shape != () or count.dtype.kind not in "iu" or not 1 <= int(count) <= MAX_LAYERS:
        raise NpzError(f"{label}: 'layers' must be a whole number in 1..{MAX_LAYERS}, got {count!r}")
    names = [f"{part}_{k}" for k in range(int(count)) for part in ("weight", "bias")]
    missing = [name for name in names if name not in arrays]
    if missing:
        raise NpzError(f"{label}: it has no array {missing[0]!r}")
    pairs = tuple((arrays[f"weight_{k}"], arrays[f"bias_{k}"]) for k in range(int(count)))
    return check_layers(pairs, f"{what} {str(path)!r}")


def load_weights(name: str = "champion") -> Layers:
    """The layers (weight, bias) of the shipped champion ``name`` (a key of :data:`WEIGHTS`): one
    object for every name of the same file (an alias and its version)."""
    return _load_file(WEIGHTS[name])


@lru_cache(maxsize=len(VERSIONS))
def _load_file(file: str) -> Layers:
    with importlib.resources.as_file(importlib.resources.files("ballenvs.duel") / file) as path:
        return read_champion(path)


def q_values(layers: Layers, observations: np.ndarray) -> np.ndarray:
    """The MLP's Q-values of a (N, features) batch: ReLU between the layers, none after the last."""
    x = observations.astype(np.float32)
    for k, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if k < len(layers) - 1:
            np.maximum(x, 0.0, out=x)
    return x


class Champion(Player):
    """A shipped champion (``name``: a key of :data:`WEIGHTS`), played greedily (its network's
    highest output's action)."""

    def __init__(self, physics: DuelPhysics, name: str = "champion") -> None:
        self.layers = load_weights(name)
        self.observer = StateObserver(physics, clock=True)

    def act(self, seat: Seat) -> Any:
        observations = self.observer.observe(seat.view, seat.xp)
        one = seat.xp is SCALAR
        actions = q_values(self.layers, observations[None] if one else observations).argmax(axis=1)
        return int(actions[0]) if one else actions.astype(np.int64)
