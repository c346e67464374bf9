"""UAVGrid episodes for one grid or N grids: options, resets, steps, observations, totals.

The whole game as a gym face needs it, still free of gymnasium's Env API: the single env
drives one grid, the vector env N grids, through the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np

from ballenvs._checks import check_choice, check_int, check_options
from ballenvs.uav.core import UAVCore, UAVParams, make_layout
from ballenvs.uav.observe import MIN_OBS_SIZE, OBS_TYPES, ImageObserver, VectorObserver

PARAM_NAMES = tuple(f.name for f in fields(UAVParams))
MAX_BLOCK_STEPS = 1000  # longest block of steps whose request draws are made at once
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
        self.layout = make_layout(self.params, np.random.default_rng(check_int("layout_seed", layout_seed, 0)))
        self.core = UAVCore(self.params, num_envs, fixed_layout=None if self.random_layout else self.layout)
        if obs_type == "vector":
            self.observer: VectorObserver | ImageObserver = VectorObserver(self.params)
        else:
            self.observer = ImageObserver(self.params, check_int("obs_size", obs_size, MIN_OBS_SIZE))
        self.observation_space = self.observer.space
        self.episode_served: Any = 0 if num_envs is None else np.zeros(num_envs, dtype=np.int64)
        self.episode_weight: Any = 0.0 if num_envs is None else np.zeros(num_envs)
        # The requests each grid's UEs raise are drawn a block of steps at a time (one
        # generator call per episode rather than per step), in the same order for a grid of
        # the vector env as for a lone grid. ``_next_step``: the block row the next step uses.
        self._block_steps = min(self.max_steps, MAX_BLOCK_STEPS)
        n_ues = self.params.n_ues
        if num_envs is None:
            self._raised = np.zeros((self._block_steps, n_ues), dtype=np.int64)
            self._any_raised = [False] * self._block_steps
            self._next_step: Any = 0
        else:
            self._raised = np.zeros((num_envs, self._block_steps, n_ues), dtype=np.int64)
            self._next_step = np.zeros(num_envs, dtype=np.int64)
            self._block_starts = np.arange(num_envs) * self._block_steps  # rows of the flattened blocks

    def _draw_start(self, rng: np.random.Generator, block: np.ndarray) -> tuple[Any, ...]:
        """One grid's start, drawn in a fixed order: layout, UAV cell, initial requests, and
        (into ``block``) the uniforms of the first block of steps."""
        p = self.params
        layout = make_layout(p, rng) if self.random_layout else self.layout
        uav_x, uav_y = rng.integers(p.size, size=2).tolist() if self.random_start else (p.size // 2, p.size // 2)
        initial = rng.random((2, p.n_ues))
        rng.random(out=block)
        return uav_x, uav_y, layout[0], layout[1], initial

    def _new_block(self) -> np.ndarray:
        return np.empty((self._block_steps, 2, self.params.n_ues))

    def reset_games(self, rngs: Sequence[np.random.Generator], games: Any = True) -> None:
        """Restart ``games`` (a bool mask, or True for one grid); only they draw from their generators."""
        core, p = self.core, self.params
        if self.num_envs is None:
            block = self._new_block()
            uav_x, uav_y, ue_x, ue_y, initial = self._draw_start(rngs[0], block)
            core.reset(True, uav_x, uav_y, ue_x, ue_y, core.request_classes(initial, p.initial_request_prob))
            self._set_block(block)
            self.episode_served, self.episode_weight = 0, 0.0
            return
        n, n_ues = self.num_envs, p.n_ues
        uav_x, uav_y = np.zeros((n, 1), dtype=np.int64), np.zeros((n, 1), dtype=np.int64)
        ue_x, ue_y = np.zeros((n, n_ues), dtype=np.int64), np.zeros((n, n_ues), dtype=np.int64)
        initial = np.zeros((n, 2, n_ues))
        restarted = np.flatnonzero(games)
        blocks = np.empty((len(restarted), self._block_steps, 2, n_ues))
        for block, i in zip(blocks, restarted):
            uav_x[i], uav_y[i], ue_x[i], ue_y[i], initial[i] = self._draw_start(rngs[i], block)
        core.reset(np.asarray(games), uav_x, uav_y, ue_x, ue_y, core.request_classes(initial, p.initial_request_prob))
        self._raised[restarted] = core.request_classes(blocks, p.request_prob)
        self._next_step[restarted] = 0
        self.episode_served[games] = 0
        self.episode_weight[games] = 0.0

    def _set_block(self, uniforms: np.ndarray) -> None:
        """One grid's next block of steps."""
        self._raised = self.core.request_classes(uniforms, self.params.request_prob)
        self._any_raised = self._raised.any(-1).tolist()
        self._next_step = 0

    def step(self, actions: Any, rngs: Sequence[np.random.Generator], active: Any = True) -> tuple[Any, Any, Any, Any]:
        """Returns ``(reward, truncated, served, served_weight)`` (floats/ints or (N,) arrays).
        ``active``: the grids whose step counts; the others are about to be reset, and their
        result is discarded."""
        if self.num_envs is None:
            if self._next_step == self._block_steps:  # a block shorter than the episode, or past max_steps
                self._set_block(rngs[0].random(out=self._new_block()))
            t = self._next_step
            raised = self._raised[t] if self._any_raised[t] else None
            self._next_step = t + 1
        else:
            exhausted = self._next_step == self._block_steps
            if exhausted.any():
                for i in np.flatnonzero(exhausted & active):  # games being reset need no draws
                    self._raised[i] = self.core.request_classes(
                        rngs[i].random(out=self._new_block()), self.params.request_prob
                    )
                self._next_step[exhausted] = 0
            raised = self._raised.reshape(-1, self.params.n_ues).take(self._block_starts + self._next_step, axis=0)
            self._next_step += 1
        reward, served, weight = self.core.step(actions, raised)
        self.episode_served = self.episode_served + served
        self.episode_weight = self.episode_weight + weight
        return reward, self.core.steps >= self.max_steps, served, weight

    def observe(self) -> Any:
        return self.observer.observe(self.core)

    def info(self, served: Any, weight: Any) -> dict[str, Any]:
        return {
            "served": served,
            "served_weight": weight,
            "episode_served": self.episode_served,
            "episode_weight": self.episode_weight,
        }
