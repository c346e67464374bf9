"""The contract every ballenvs game follows; the gym faces in :mod:`ballenvs.faces` serve any game that does.

A game holds the rules and the state of a batch of games, free of gymnasium's Env API:

- ``num_games=None``: one game whose state is Python scalars (the single env runs this: numpy's
  per-call overhead would dominate at N = 1); ``num_games=N``: N games in arrays with a leading
  dimension N (the vector env). The same rule code serves both (:mod:`ballenvs.backend`).
- Which games: everywhere in the contract (``reset``'s ``games``, ``step``'s ``active``,
  :meth:`Player.reset`), ``None`` means every game (and the one game of ``num_games=None``),
  else a bool (N,) mask.
- ``reset(rngs, games)``: restart ``games``; restarted game i draws its randomness from
  ``rngs[i]``, and only restarted games draw.
- ``step(actions, rngs, active)``: advance every game by one step and return ``(rewards,
  terminated, info)``. Games outside ``active`` are about to be reset and their results are
  thrown away; the face hands them a throwaway generator so that their own stays untouched.
  A game never truncates: time limits belong to the faces (gymnasium's ``TimeLimit`` for the
  single env, ``max_episode_steps`` for the vector env), counted on :attr:`Game.steps`.
- ``info`` (and ``reset_info()``) hold, for one game, Python values (ints, floats, tuples,
  strings, None) and, for N games, the arrays gymnasium's ``SyncVectorEnv`` would build from
  those values: int64 for ints, float64 for floats, object arrays for anything else. Returned
  arrays are fresh: the game never writes into them afterwards.
- ``observe()``: every game's observation, in :attr:`Game.observation_space` (one game's).
- Options are keyword arguments of ``__init__``, listed in :attr:`Game.OPTIONS`; each is checked
  there, with an error that names the bad value and what is valid.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces


@dataclass(frozen=True)
class RenderSpec:
    """How ``render()`` draws a game for people: picture side in pixels, the world's extent shown
    along both axes, frames per second in "human" mode, and the window title."""

    size: int
    world_min: float
    world_max: float
    fps: int
    title: str


class Game(ABC):
    """One kind of game over a batch; see the module docstring for the contract."""

    #: The keyword options ``__init__`` takes (besides ``num_games``).
    OPTIONS: ClassVar[tuple[str, ...]]
    #: The game's name in error messages.
    NAME: ClassVar[str]

    num_games: int | None
    observation_space: spaces.Space
    action_space: spaces.Discrete
    render_spec: RenderSpec

    @property
    @abstractmethod
    def steps(self) -> Any:
        """Steps since each game's reset: an int, or an (N,) int64 array."""

    @abstractmethod
    def reset(self, rngs: Sequence[np.random.Generator], games: np.ndarray | None = None) -> None:
        """Restart ``games`` (None: all; else a bool (N,) mask), each drawing from its own generator."""

    @abstractmethod
    def step(
        self, actions: Any, rngs: Sequence[np.random.Generator], active: np.ndarray | None = None
    ) -> tuple[Any, Any, dict[str, Any]]:
        """Advance every game by one step with ``actions`` (an int, or (N,) int64); return
        ``(rewards, terminated, info)`` as floats/bools or (N,) float64/bool arrays."""

    @abstractmethod
    def observe(self) -> Any:
        """Every game's observation: one game's, or a batch with a leading dimension N."""

    def reset_info(self) -> dict[str, Any]:
        """The info of freshly reset games (read for the games just reset only)."""
        return {}

    def get_state(self) -> dict[str, Any]:
        """Everything the games need to go on exactly as they would have: positions, step counts,
        what the game has drawn ahead, its players' memory (:mod:`ballenvs.state`)."""
        raise NotImplementedError(f"{self.NAME} cannot save its games in progress")

    def set_state(self, state: dict[str, Any]) -> None:
        """Go on from what :meth:`get_state` of a game made with the same options gave."""
        raise NotImplementedError(f"{self.NAME} cannot restore games in progress")

    @abstractmethod
    def draw(self, canvas: Any, game: int | None) -> None:
        """Draw game ``game`` of a batch (None: the one game) on a :class:`ballenvs.render.Canvas`."""


class Seat(NamedTuple):
    """What a player of a two-player game gets each step, for one game or a batch: ``view``, the
    game's state seen from its side (game-specific, e.g. :class:`ballenvs.duel.observe.SideView`);
    ``xp``, the backend (:mod:`ballenvs.backend`); ``observe()``, the side's observation (made only
    when called: only learned policies need it); ``rngs``, one generator per game."""

    view: Any
    xp: Any
    observe: Callable[[], Any]
    rngs: Sequence[np.random.Generator]


class Player:
    """Chooses one side's actions for one game or a batch, in that side's frame."""

    #: Whether :meth:`act` reads the view's clock (the share of the game left). A player that
    #: says False is seated without it, so a game whose own rules have no clock computes none.
    reads_clock: ClassVar[bool] = True

    def act(self, seat: Seat) -> Any:
        """An action (one game) or an (N,) int64 array of them."""
        raise NotImplementedError

    def reset(self, games: np.ndarray | None) -> None:
        """``games`` restarted (None: all of them, else a bool mask): a player that remembers
        earlier steps (a policy on stacked frames) forgets those games' past. Most keep nothing."""

    def finished(self, games: np.ndarray | None, scores: Any) -> None:
        """``games`` ended this step (None: the one game, else a bool mask); ``scores`` holds this
        player's result in each game (+1 won, -1 lost, 0 drawn; read where ``games`` is set). A
        player that learns who beats it (self-play's pool) keeps the tally; most ignore it."""

    def get_state(self) -> dict[str, Any]:
        """What the player remembers between steps, generators included (:mod:`ballenvs.state`):
        a game saved in progress goes on with the same plans. Most remember nothing."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Go on from what :meth:`get_state` of a player made the same way gave."""
