"""Each env's reference policies and how to score a policy against them, reached through the env id.

Trainers and tools never branch on env ids: they ask :func:`reference_for` and get a
:class:`Reference` that says

- ``baselines(env_kwargs)``: the mean return of each reference policy on seeded episodes of
  the env (the dashed lines of a learning curve), and which of them is the ``heuristic`` to beat;
- ``yardsticks``: how to score a trained policy. Each :class:`Yardstick` names the env options
  to play under and turns the played episodes (episode k reset with seed ``seed + k``) into a
  figure with its standard error: a win rate against an opponent, or the return minus the
  heuristic's on the very same episodes;
- ``arena``, for two-player games offered with an ``opponent`` option: the built-in players'
  names, and how tools make players and play matches (:class:`Arena`);
- ``state_policies``, for one-player games: the reference policies that act from the state an
  env's ``state_info=True`` option reports (``info["state"]``), to teach a student that sees pixels.

Each game keeps its reference in ``ballenvs/<game>/reference.py``, registered beside its entry
points (``ballenvs/__init__.py``).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The first seed of a yardstick's episodes: seeds that training and its evaluations leave unused.
SCORE_SEED = 20_000


@dataclass(frozen=True)
class Episodes:
    """What a scored policy did: one entry per episode, episode k reset with seed ``seed + k``."""

    returns: np.ndarray
    final_infos: Sequence[dict[str, Any]]  # each episode's last info
    seed: int


@dataclass(frozen=True)
class Yardstick:
    """One figure to score a policy by: play ``episodes`` episodes under ``env_overrides``, then
    ``score(episodes, env_id, env_kwargs)`` gives (value, standard error)."""

    name: str
    env_overrides: Mapping[str, Any]
    score: Callable[[Episodes, str, dict[str, Any]], tuple[float, float]]
    episodes: int = 100
    percent: bool = False  # a fraction, shown as a percentage


class Arena(ABC):
    """How the tools play a two-player game whose env takes an ``opponent`` (self-play, leagues,
    evaluations against every built-in player). ``env_kwargs`` are an env's options as a run
    gives them (the registered ones of its id come first)."""

    #: The built-in players' names, which the env's ``opponent`` option takes.
    players: tuple[str, ...] = ()

    @property
    def yardstick_players(self) -> tuple[str, ...]:
        """The built-in players the tools play one after another (evaluations against every
        built-in, self-play's evaluations): all of them, unless some are too slow for that."""
        return self.players

    @property
    def held_out_players(self) -> tuple[str, ...]:
        """The built-in players that measure a learner rather than train it: evaluations report
        them, and the score that keeps a run's best model leaves them out. None unless the game says."""
        return ()

    def knows(self, name: str) -> bool:
        """Whether ``name`` names one of the game's own players, which need no file: a built-in
        one, or a form a game takes beyond :attr:`players` (BallDuel's ``planner:H/H/...``). A
        name of such a form with bad values is refused (ValueError), naming what is valid."""
        return name in self.players

    def played_as(self, name: str) -> str:
        """A built-in player's name as a report says it: with the version it plays where the name is
        an alias that may move (BallDuel's ``champion (champion-v3)``); any other name as it is."""
        return name

    @abstractmethod
    def make_player(self, spec: Any, env_kwargs: Mapping[str, Any]) -> Any:
        """A :class:`ballenvs.game.Player`: a built-in one by name, or one around a policy."""

    @abstractmethod
    def observer(self, env_kwargs: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        """``observe(view, xp)``: a side's observation as a policy trained under ``env_kwargs`` sees it,
        made from a :class:`ballenvs.game.Seat`'s view (so a model can play under other options)."""

    @abstractmethod
    def film(self, first: Any, second: Any, seed: int, env_kwargs: Mapping[str, Any]) -> list[Any]:
        """One game of ``first`` (the left side) against ``second``, as pictures of every step."""

    def learner_seat(self, env: Any) -> Any:
        """The :class:`ballenvs.game.Seat` of the learner's side of ``env`` (this game's single or
        vector env) this step: what a Player needs to act for the learner, as the opponent acts."""
        raise NotImplementedError(f"{type(self).__name__} seats no learner")

    def state_seat(self, states: Any, env_kwargs: Mapping[str, Any], rng: np.random.Generator) -> Any:
        """The :class:`ballenvs.game.Seat` of the learner's side that an env's ``info["state"]``
        (N rows, its ``state_info=True`` option) holds, for players that read the game: a teacher
        labelling the frames of a student that sees pixels. No observation: a model player makes
        its own (:meth:`state_observation`)."""
        raise NotImplementedError(f"{type(self).__name__} shows no state")

    def state_observation(self, states: Any, env_kwargs: Mapping[str, Any]) -> Any:
        """What ``obs_type="state"`` under ``env_kwargs`` shows of those states, bit for bit."""
        raise NotImplementedError(f"{type(self).__name__} shows no state")

    def search_exploiter(self, model: Any, env_kwargs: Mapping[str, Any], seed: int) -> Any:
        """A player that plans every step against ``model`` (a Player of its own, reset as it
        plans) by simulating the game: the search half of approximate exploitability. None:
        this game has none."""
        return None

    @abstractmethod
    def play_pairs(
        self,
        first: Any,
        second: Any,
        games: int,
        seed: int,
        env_kwargs: Mapping[str, Any],
        on_step: Callable[[int], None] | None = None,
    ) -> dict[str, int]:
        """``games`` games between two players (names or Players), half with each on the first
        side: ``first_wins``, ``second_wins`` and ``draws`` (time-outs included). ``on_step(finished)``
        after every step of the games, with how many are over (for a command's progress)."""


@dataclass(frozen=True)
class Reference:
    """An env's reference policies: ``baselines`` gives each one's mean return, ``heuristic``
    names the one to beat, ``yardsticks`` score a trained policy, ``arena`` plays a two-player
    game's sides (None for one-player games). ``state_policies``: name -> ``make(env_kwargs)``,
    which gives ``act(states)``: the actions (N,) of that policy in the N states (rows of
    ``info["state"]``) of an env made with ``env_kwargs``."""

    heuristic: str
    baselines: Callable[[str, dict[str, Any]], dict[str, float]]
    yardsticks: tuple[Yardstick, ...] = field(default_factory=tuple)
    arena: Arena | None = None
    state_policies: Mapping[str, Callable[[Mapping[str, Any]], Callable[[np.ndarray], np.ndarray]]] = field(
        default_factory=dict
    )

    @property
    def players(self) -> tuple[str, ...]:
        """The built-in players an ``opponent`` option takes; () for games without one."""
        return () if self.arena is None else self.arena.players

    @property
    def yardstick_players(self) -> tuple[str, ...]:
        """The built-in players the tools play one after another (:attr:`Arena.yardstick_players`)."""
        return () if self.arena is None else self.arena.yardstick_players

    @property
    def held_out_players(self) -> tuple[str, ...]:
        """:attr:`Arena.held_out_players`; () for games without an opponent."""
        return () if self.arena is None else self.arena.held_out_players

    def knows(self, name: str) -> bool:
        """:meth:`Arena.knows`; False for games without an opponent."""
        return self.arena is not None and self.arena.knows(name)


def win_rate(episodes: Episodes, side: str = "left") -> float | None:
    """The share of ``episodes`` that ``side`` won, by their last info's ``winner``; None for
    episodes of a game that names no winner."""
    winners = [info.get("winner", "") for info in episodes.final_infos]
    if "" in winners:
        return None
    return float(np.mean([winner == side for winner in winners]))


def win_rate_score(side: str = "left") -> Callable[[Episodes, str, dict[str, Any]], tuple[float, float]]:
    """A yardstick's score: :func:`win_rate` with its standard error."""

    def score(episodes: Episodes, env_id: str, env_kwargs: dict[str, Any]) -> tuple[float, float]:
        rate = win_rate(episodes, side) or 0.0
        return rate, float(np.sqrt(rate * (1 - rate) / len(episodes.final_infos)))

    return score


def paired_difference(episode_returns: Callable[..., np.ndarray], policy: str) -> Callable[..., tuple[float, float]]:
    """The policy's return minus ``policy``'s on the same seeded episodes: mean and standard error.
    ``episode_returns(policy, seeds, env_id, **env_kwargs)`` plays the reference policy."""

    def score(episodes: Episodes, env_id: str, env_kwargs: dict[str, Any]) -> tuple[float, float]:
        seeds = range(episodes.seed, episodes.seed + len(episodes.returns))
        differences = np.asarray(episodes.returns) - episode_returns(policy, seeds, env_id, **env_kwargs)
        return float(differences.mean()), float(differences.std() / np.sqrt(len(differences)))

    return score


#: env id -> "module:attribute" of its Reference, beside its registration.
_REFERENCES: dict[str, str] = {}


def register_reference(env_id: str, location: str) -> None:
    _REFERENCES[env_id] = location


def reference_for(env_id: str) -> Reference:
    """The :class:`Reference` of a registered env; an env without one is an error naming those that have one."""
    if env_id not in _REFERENCES:
        raise ValueError(f"no reference policies for env {env_id!r}; envs with them: {', '.join(_REFERENCES)}")
    module, attribute = _REFERENCES[env_id].split(":")
    return getattr(importlib.import_module(module), attribute)
