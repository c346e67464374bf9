"""A new game, as CONTRIBUTING's recipe adds one: walk east along a corridor to its end.

Its rules are written once for one game (Python scalars) and N games (numpy arrays), with the
backends of :mod:`ballenvs.backend`; the gym faces are two-line subclasses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ballenvs._checks import check_int
from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import N_ACTIONS, STEP_X
from ballenvs.faces import GameEnv, GameVectorEnv, metadata_for
from ballenvs.game import Game, RenderSpec
from ballenvs.reference import Reference

RENDER_FPS = 15


class CorridorGame(Game):
    """Start in the corridor's first half; each action's east-west part moves one cell; reaching
    the last cell wins (+1, terminated)."""

    NAME = "Corridor-v0"
    OPTIONS = ("length",)

    def __init__(self, num_games: int | None = None, length: int = 8) -> None:
        self.num_games, self.length = num_games, check_int("length", length, 2)
        self.xp = SCALAR if num_games is None else NUMPY
        self.position: Any = 0 if num_games is None else np.zeros(num_games, dtype=np.int64)
        self._steps: Any = 0 if num_games is None else np.zeros(num_games, dtype=np.int64)
        self._moves = np.sign(STEP_X).astype(np.int64)
        self.observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.render_spec = RenderSpec(200, 0.0, float(self.length), RENDER_FPS, self.NAME)

    @property
    def steps(self) -> Any:
        return self._steps

    def reset(self, rngs: Sequence[np.random.Generator], games: np.ndarray | None = None) -> None:
        if self.num_games is None:
            self.position, self._steps = int(rngs[0].integers(self.length // 2)), 0
            return
        games = np.ones(self.num_games, dtype=bool) if games is None else games
        starts = np.array([rngs[i].integers(self.length // 2) for i in np.flatnonzero(games)], dtype=np.int64)
        self.position, self._steps = self.position.copy(), np.where(games, 0, self._steps)
        self.position[games] = starts

    def step(self, actions: Any, rngs: Sequence[np.random.Generator], active: np.ndarray | None = None) -> tuple:
        xp = self.xp
        self.position = xp.minimum(xp.maximum(self.position + self._moves[actions], 0), self.length - 1)
        self._steps = self._steps + 1
        won = self.position == self.length - 1
        return (float(won) if xp is SCALAR else won * 1.0), won, {}

    def observe(self) -> Any:
        columns = [np.asarray(self.position, dtype=np.float32) / (self.length - 1), np.ones_like(self.position, np.float32)]
        return np.stack(columns, axis=-1)

    def draw(self, canvas: Any, game: int | None) -> None:
        position = self.position if game is None else int(self.position[game])
        canvas.circle(position + 0.5, self.length / 2, 0.4, (80, 160, 255))


class CorridorEnv(GameEnv):
    game_class = CorridorGame
    metadata = metadata_for(RENDER_FPS)


class CorridorVectorEnv(GameVectorEnv):
    game_class = CorridorGame
    metadata = metadata_for(RENDER_FPS, vector=True)


REFERENCE = Reference(heuristic="east", baselines=lambda env_id, env_kwargs: {"east": 1.0})
