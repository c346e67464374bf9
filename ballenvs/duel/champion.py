"""The champion: the final model of a BallDuel-v1 self-play run, shipped as a built-in player.

Its Q-network (an MLP on the state vector with the clock) is stored as plain float32 arrays in
``champion.npz`` beside this file and run with numpy, so the player needs neither torch nor
the agents package (slimevolleygym ships its baseline the same way). It reads the balls and the
clock from its seat's view, whatever the learner on the other side sees, and plays BallDuel-v0
too (the clock then runs over v0's 1000 steps). How it was made and how good it is: README,
"The champion". ``python -m agents.export_champion`` writes a new one from a run.
"""

from __future__ import annotations

import importlib.resources
from functools import lru_cache
from typing import Any

import numpy as np

from ballenvs.backend import SCALAR
from ballenvs.duel.core import DuelPhysics
from ballenvs.duel.observe import StateObserver
from ballenvs.game import Player, Seat

WEIGHTS = "champion.npz"


@lru_cache(maxsize=1)
def load_weights() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The layers (weight, bias) of the shipped network, read without pickle."""
    path = importlib.resources.files("ballenvs.duel") / WEIGHTS
    with importlib.resources.as_file(path) as file, np.load(file, allow_pickle=False) as data:
        count = int(data["layers"])
        return tuple((data[f"weight_{k}"].astype(np.float32), data[f"bias_{k}"].astype(np.float32)) for k in range(count))


def q_values(layers: tuple[tuple[np.ndarray, np.ndarray], ...], observations: np.ndarray) -> np.ndarray:
    """The MLP's Q-values of a (N, features) batch: ReLU between the layers, none after the last."""
    x = observations.astype(np.float32)
    for k, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if k < len(layers) - 1:
            np.maximum(x, 0.0, out=x)
    return x


class Champion(Player):
    """The shipped self-play champion, played greedily (its highest Q-value's action)."""

    def __init__(self, physics: DuelPhysics) -> None:
        self.layers = load_weights()
        self.observer = StateObserver(physics, clock=True)

    def act(self, seat: Seat) -> Any:
        observations = self.observer.observe(seat.view, seat.xp)
        one = seat.xp is SCALAR
        actions = q_values(self.layers, observations[None] if one else observations).argmax(axis=1)
        return int(actions[0]) if one else actions.astype(np.int64)
