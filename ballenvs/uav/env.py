"""``UAVGrid-v0``: a UAV on a grid serving ground users' requests.

The gymnasium faces of :class:`ballenvs.uav.game.UAVGame`: :class:`UAVGridEnv` runs one
grid, :class:`UAVGridVectorEnv` (``gym.make_vec``) runs N at once through the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from ballenvs._checks import check_action
from ballenvs.directions import N_ACTIONS
from ballenvs.render import Renderer
from ballenvs.uav.drawing import draw_uav
from ballenvs.uav.game import UAVGame
from ballenvs.vector import BatchedVectorEnv

RENDER_SIZE = 500
METADATA = {"render_modes": ["human", "rgb_array"], "render_fps": 15}


def _renderer(render_mode: str | None, game: UAVGame) -> Renderer:
    return Renderer(render_mode, RENDER_SIZE, 0.0, float(game.params.size), METADATA["render_fps"], "UAVGrid-v0")


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
        **params: any field of :class:`ballenvs.uav.core.UAVParams` (size, n_ues, speed,
            coverage_radius, request_prob, class_probs, deadlines, class_weights, move_cost,
            n_hotspots, hotspot_spread, initial_request_prob).

    Info: ``served`` and ``served_weight`` of the step, ``episode_served`` and
    ``episode_weight`` so far.
    """

    metadata = METADATA

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        self.game = UAVGame(None, **options)
        self._renderer = _renderer(render_mode, self.game)
        self.render_mode = render_mode
        self.params = self.game.params
        self.core = self.game.core
        self.observation_space = self.game.observation_space
        self.action_space = spaces.Discrete(N_ACTIONS)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"UAVGrid-v0 takes no reset options, got {options!r}")
        self.game.reset_games([self.np_random])
        if self.render_mode == "human":
            self.render()
        return self.game.observe(), self.game.info(0, 0.0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        action = check_action(action, N_ACTIONS)
        reward, truncated, served, weight = self.game.step(action, [self.np_random])
        if self.render_mode == "human":
            self.render()
        return self.game.observe(), float(reward), False, truncated, self.game.info(int(served), float(weight))

    def render(self) -> np.ndarray | None:
        core = self.core
        return self._renderer.render(
            lambda canvas: draw_uav(canvas, self.params, core.state, core.steps, self.game.episode_served)
        )

    def close(self) -> None:
        self._renderer.close()


class UAVGridVectorEnv(BatchedVectorEnv):
    """``num_envs`` UAV grids stepped together: ``gym.make_vec("UAVGrid-v0", num_envs=256)``.

    Takes the options of :class:`UAVGridEnv`. Env i reset with seed s + i runs exactly as a
    :class:`UAVGridEnv` reset with seed s + i. Infos hold (N,) arrays of the single env's
    keys. ``render()`` draws the first env.
    """

    metadata = {**METADATA, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **options: Any,
    ) -> None:
        super().__init__(num_envs, N_ACTIONS, autoreset_mode)
        self.game = UAVGame(self.num_envs, **options)
        self._renderer = _renderer(render_mode, self.game)
        self.render_mode = render_mode
        self._set_spaces(self.game.observation_space)

    def _reset_games(self, games: np.ndarray) -> None:
        self.game.reset_games(self.rngs, games)

    def _step_games(self, actions: np.ndarray, rngs: Sequence[np.random.Generator], active: np.ndarray) -> tuple:
        reward, truncated, served, weight = self.game.step(actions, rngs, active)
        info = self._for_every_env(self.game.info(np.where(active, served, 0), np.where(active, weight, 0.0)))
        return np.where(active, reward, 0.0), np.zeros(self.num_envs, dtype=bool), truncated & active, info

    def _observe(self) -> Any:
        return self.game.observe()

    def _reset_info(self) -> dict:
        return self._for_every_env(self.game.info(np.zeros(self.num_envs, dtype=np.int64), np.zeros(self.num_envs)))

    def render(self) -> list[np.ndarray] | None:
        core = self.game.core
        frame = self._renderer.render(
            lambda canvas: draw_uav(
                canvas, self.game.params, core.grid(0), int(core.steps[0]), int(self.game.episode_served[0])
            )
        )
        return None if frame is None else [frame]

    def close_extras(self, **kwargs: Any) -> None:
        self._renderer.close()
