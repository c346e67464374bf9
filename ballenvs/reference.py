"""Each env's reference policies and how to score a policy against them, reached through the env id.

Trainers and tools never branch on env ids: they ask :func:`reference_for` and get a
:class:`Reference` that says

- ``baselines(env_kwargs)``: the mean return of each reference policy on seeded episodes of
  the env (the dashed lines of a learning curve), and which of them is the ``heuristic`` to beat;
- ``yardsticks``: how to score a trained policy. Each :class:`Yardstick` names the env options
  to play under and turns the played episodes (episode k reset with seed ``seed + k``) into a
  figure with its standard error: a win rate against an opponent, or the return minus the
  heuristic's on the very same episodes.

A new env registers its reference beside its entry points (``ballenvs/__init__.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


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


@dataclass(frozen=True)
class Reference:
    """An env's reference policies: ``baselines`` gives each one's mean return, ``heuristic``
    names the one to beat, ``yardsticks`` score a trained policy."""

    heuristic: str
    baselines: Callable[[str, dict[str, Any]], dict[str, float]]
    yardsticks: tuple[Yardstick, ...] = field(default_factory=tuple)


def win_rate(winner: str) -> Callable[[Episodes, str, dict[str, Any]], tuple[float, float]]:
    """The fraction of episodes whose last info says ``winner`` won, with its standard error."""

    def score(episodes: Episodes, env_id: str, env_kwargs: dict[str, Any]) -> tuple[float, float]:
        wins = np.array([info.get("winner") == winner for info in episodes.final_infos], dtype=float)
        return float(wins.mean()), float(np.sqrt(wins.mean() * (1 - wins.mean()) / len(wins)))

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
