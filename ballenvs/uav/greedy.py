"""A strong hand-written reference for UAVGrid: fly to where the most request weight is.

It reads the grid's true state (the layout included) from the env it is given; it is a
yardstick for learned agents, not something an agent sees.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np

from ballenvs.backend import NUMPY
from ballenvs.directions import heading_to_action
from ballenvs.uav.physics import UAVCore


class GreedyPolicy:
    """Pick the UE cell whose coverage disc holds the most active request weight that can
    still be served on arrival, discounted by travel time (weight / (1 + steps to get
    there)), and move one step toward it. With nothing to serve, wait at the UEs' centroid.

    Use ``act()`` for the env's current state, or ``predict(obs)`` like a stable-baselines3
    model (the observation is ignored: the policy reads the env). Works for a single env
    (returns an int) and for an env whose core holds N grids (returns (N,) ints).
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv | UAVCore) -> None:
        self.core: UAVCore = env if isinstance(env, UAVCore) else cast(Any, env.unwrapped).game.core  # our envs' game

    def act(self) -> Any:
        core = self.core
        p, s = core.params, core.state
        one = core.num_games is None
        # Work on (N, ...) arrays; one grid is N = 1.
        uav_x, uav_y = (np.array([[s.uav_x]]), np.array([[s.uav_y]])) if one else (s.uav_x, s.uav_y)
        ue_x, ue_y = np.atleast_2d(s.ue_x), np.atleast_2d(s.ue_y)
        request, time_left = np.atleast_2d(s.request), np.atleast_2d(s.time_left)
        # Steps until each candidate cell (a UE's) is within the UAV's coverage.
        to_candidate = np.hypot(ue_x - uav_x, ue_y - uav_y)
        travel = np.ceil(np.maximum(to_candidate - p.coverage_radius, 0.0) / p.speed)
        # covers[n, c, j]: candidate c's disc holds UE j.
        covers = (ue_x[:, :, None] - ue_x[:, None, :]) ** 2 + (
            ue_y[:, :, None] - ue_y[:, None, :]
        ) ** 2 <= p.coverage_radius**2
        still_there = time_left[:, None, :] > travel[:, :, None]
        weight = core.weight_of[request][:, None, :]
        value = (covers * still_there * weight).sum(-1) / (1.0 + travel)
        best = value.argmax(-1)
        rows = np.arange(len(best))
        anything = value[rows, best] > 0
        target_x = np.where(anything, ue_x[rows, best], ue_x.mean(-1))
        target_y = np.where(anything, ue_y[rows, best], ue_y.mean(-1))
        hx, hy = target_x - uav_x[:, 0], target_y - uav_y[:, 0]
        # Close enough: stay rather than pay for moves that jitter round the target.
        arrived = np.hypot(hx, hy) < p.speed
        actions = np.where(arrived, 0, heading_to_action(NUMPY, hx, hy))
        return int(actions[0]) if one else actions

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[Any, None]:
        return self.act(), None

    def __call__(self, observation: Any) -> Any:
        return self.act()
