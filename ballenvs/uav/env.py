"""``UAVGrid-v0``: a UAV on a grid serving ground users' requests.

The gymnasium face of :class:`ballenvs.uav.core.UAVCore` with one grid.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ballenvs._checks import check_action, check_choice, check_int
from ballenvs.directions import N_ACTIONS
from ballenvs.render import Canvas, check_render_mode
from ballenvs.uav.core import UAVCore, UAVParams, make_layout
from ballenvs.uav.drawing import draw_uav
from ballenvs.uav.observe import MIN_OBS_SIZE, OBS_TYPES, ImageObserver, VectorObserver

RENDER_SIZE = 500
PARAM_NAMES = tuple(f.name for f in fields(UAVParams))


class UAVGridEnv(gym.Env):
    """A UAV on a ``size`` x ``size`` grid serves ``n_ues`` ground users (UEs).

    Each step the UAV stays or moves ``speed`` cells in one of 8 directions (clamped at the
    edges). Idle UEs raise requests of class 1..3 at random; a request expires after its
    class's deadline. Every UE with a request within ``coverage_radius`` of the UAV is served
    at once. Reward: the served requests' class weights (1, 2, 4 by default) divided by the
    largest weight, minus ``move_cost`` per move. Truncated after ``max_steps`` (300); never
    terminated.

    Args:
        render_mode: None (default), "rgb_array" or "human".
        obs_type: "vector" (default): ``Dict(pos=Box(0, 1, (2,)), requests=MultiDiscrete([4] * n_ues))``;
            "image": a (4, obs_size, obs_size) uint8 map centred on the UAV.
        obs_size: side of the image, at least 36.
        layout_seed: seed of the fixed UE layout (hotspots), 0 by default.
        random_layout: draw a new layout at every reset (then use the image observation:
            the vector one does not say where the UEs are).
        random_start: start the UAV on a random cell instead of the centre.
        max_steps: truncation step.
        **params: any field of :class:`UAVParams` (size, n_ues, speed, coverage_radius,
            request_prob, class_probs, deadlines, class_weights, move_cost, n_hotspots,
            hotspot_spread, initial_request_prob).

    Info: ``served`` and ``served_weight`` of the step, ``episode_served`` and
    ``episode_weight`` so far.
    """

    metadata = {"render_modes": ["human", "rgb_array"], "render_fps": 15}

    def __init__(
        self,
        render_mode: str | None = None,
        obs_type: str = "vector",
        obs_size: int = 64,
        layout_seed: int = 0,
        random_layout: bool = False,
        random_start: bool = False,
        max_steps: int = 300,
        **params: Any,
    ) -> None:
        check_render_mode(render_mode)
        unknown = sorted(set(params) - set(PARAM_NAMES))
        if unknown:
            raise ValueError(f"unknown UAVGrid option(s) {', '.join(map(repr, unknown))}; valid: {', '.join(PARAM_NAMES)}")
        self.render_mode = render_mode
        self.params = UAVParams(**params)
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        self.max_steps = check_int("max_steps", max_steps, 1)
        self.random_layout = bool(random_layout)
        self.random_start = bool(random_start)
        self.core = UAVCore(self.params)
        if obs_type == "vector":
            self.observer: VectorObserver | ImageObserver = VectorObserver(self.params)
        else:
            self.observer = ImageObserver(self.params, check_int("obs_size", obs_size, MIN_OBS_SIZE))
        self.observation_space = self.observer.space
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.layout = make_layout(self.params, np.random.default_rng(check_int("layout_seed", layout_seed, 0)))
        self._episode_served = 0
        self._episode_weight = 0.0
        self._canvas: Canvas | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"UAVGrid-v0 takes no reset options, got {options!r}")
        rng, size = self.np_random, self.params.size
        if self.random_layout:
            self.layout = make_layout(self.params, rng)
        uav_x, uav_y = rng.integers(size, size=2).tolist() if self.random_start else (size // 2, size // 2)
        self.core.reset(True, uav_x, uav_y, *self.layout, rng.random((2, self.params.n_ues)))
        self._episode_served, self._episode_weight = 0, 0.0
        if self.render_mode == "human":
            self.render()
        return self.observer.observe(self.core), self._info(0, 0.0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        action = check_action(action, N_ACTIONS)
        reward, served, weight = self.core.step(action, self.np_random.random((2, self.params.n_ues)))
        self._episode_served += int(served)
        self._episode_weight += float(weight)
        if self.render_mode == "human":
            self.render()
        truncated = self.core.steps >= self.max_steps
        return self.observer.observe(self.core), float(reward), False, truncated, self._info(int(served), float(weight))

    def _info(self, served: int, weight: float) -> dict[str, Any]:
        return {
            "served": served,
            "served_weight": weight,
            "episode_served": self._episode_served,
            "episode_weight": self._episode_weight,
        }

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn('render() called with render_mode=None; make the env with render_mode="rgb_array" or "human"')
            return None
        if self._canvas is None:
            self._canvas = Canvas(self.render_mode, RENDER_SIZE, 0.0, float(self.params.size), self.metadata["render_fps"], "UAVGrid-v0")
        draw_uav(self._canvas, self.core, self._episode_served)
        return self._canvas.finish()

    def close(self) -> None:
        if self._canvas is not None:
            self._canvas.close()
            self._canvas = None
