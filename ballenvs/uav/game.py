"""UAVGrid episodes for one grid or N grids: options, resets, steps, observations, totals.

The whole game as a gym face needs it, still free of gymnasium's Env API: the single env
drives one grid, the vector env N grids, through the same code.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Sequence

import numpy as np

from ballenvs._checks import check_choice, check_int, check_options
from ballenvs.uav.core import UAVCore, UAVParams, make_layout
from ballenvs.uav.observe import MIN_OBS_SIZE, OBS_TYPES, ImageObserver, VectorObserver

PARAM_NAMES = tuple(f.name for f in fields(UAVParams))
OPTIONS = ("obs_type", "obs_size", "layout_seed", "random_layout", "random_start", "max_steps", *PARAM_NAMES)


class UAVGame:
    """``num_envs=None``: one grid (UAV cell as Python ints); else N grids (arrays)."""

    def __init__(
        self,
        num_envs: int | None = None,
        obs_type: str = "vector",
        obs_size: int = 64,
        layout_seed: int = 0,
        random_layout: bool = False,
        random_start: bool = False,
        max_steps: int = 300,
        **params: Any,
    ) -> None:
        check_options("UAVGrid", params, PARAM_NAMES)
        self.params = UAVParams(**params)
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        self.max_steps = check_int("max_steps", max_steps, 1)
        self.random_layout = bool(random_layout)
        self.random_start = bool(random_start)
        self.num_envs = num_envs
        self.core = UAVCore(self.params, num_envs)
        if obs_type == "vector":
            self.observer: VectorObserver | ImageObserver = VectorObserver(self.params)
        else:
            self.observer = ImageObserver(self.params, check_int("obs_size", obs_size, MIN_OBS_SIZE))
        self.observation_space = self.observer.space
        self.layout = make_layout(self.params, np.random.default_rng(check_int("layout_seed", layout_seed, 0)))
        self.episode_served: Any = 0 if num_envs is None else np.zeros(num_envs, dtype=np.int64)
        self.episode_weight: Any = 0.0 if num_envs is None else np.zeros(num_envs)

    def _draw_start(self, rng: np.random.Generator) -> tuple[Any, ...]:
        """One grid's start, drawn in a fixed order: layout, UAV cell, initial requests."""
        size = self.params.size
        layout = make_layout(self.params, rng) if self.random_layout else self.layout
        uav_x, uav_y = rng.integers(size, size=2).tolist() if self.random_start else (size // 2, size // 2)
        return uav_x, uav_y, layout[0], layout[1], rng.random((2, self.params.n_ues))

    def reset_games(self, rngs: Sequence[np.random.Generator], games: Any = True) -> None:
        """Restart ``games`` (a bool mask, or True for one grid); only they draw from their generators."""
        if self.num_envs is None:
            self.core.reset(True, *self._draw_start(rngs[0]))
            self.episode_served, self.episode_weight = 0, 0.0
            return
        n, n_ues = self.num_envs, self.params.n_ues
        uav_x, uav_y = np.zeros((n, 1), dtype=np.int64), np.zeros((n, 1), dtype=np.int64)
        ue_x, ue_y = np.zeros((n, n_ues), dtype=np.int64), np.zeros((n, n_ues), dtype=np.int64)
        draws = np.zeros((n, 2, n_ues))
        for i in np.flatnonzero(games):
            uav_x[i], uav_y[i], ue_x[i], ue_y[i], draws[i] = self._draw_start(rngs[i])
        self.core.reset(np.asarray(games), uav_x, uav_y, ue_x, ue_y, draws)
        self.episode_served[games] = 0
        self.episode_weight[games] = 0.0

    def step(self, actions: Any, rngs: Sequence[np.random.Generator]) -> tuple[Any, Any, Any, Any]:
        """Returns ``(reward, truncated, served, served_weight)`` (floats/ints or (N,) arrays)."""
        n_ues = self.params.n_ues
        if self.num_envs is None:
            draws = rngs[0].random((2, n_ues))
        else:
            # Each grid draws from its own generator (as a lone grid would), straight into place.
            draws = np.empty((self.num_envs, 2, n_ues))
            for rng, out in zip(rngs, draws):
                rng.random(out=out)
        reward, served, weight = self.core.step(actions, draws)
        self.episode_served = self.episode_served + served
        self.episode_weight = self.episode_weight + weight
        return reward, self.core.steps >= self.max_steps, served, weight

    def observe(self) -> Any:
        return self.observer.observe(self.core)

    def info(self, served: Any, weight: Any) -> dict[str, Any]:
        return {"served": served, "served_weight": weight, "episode_served": self.episode_served, "episode_weight": self.episode_weight}
