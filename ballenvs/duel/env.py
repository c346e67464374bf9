"""``BallDuel-v0``: two balls in a ring; push the other one out.

The gymnasium face of :class:`ballenvs.duel.game.DuelGame` with one game.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ballenvs._checks import check_action
from ballenvs.directions import N_ACTIONS
from ballenvs.duel.core import LEFT, RIGHT
from ballenvs.duel.drawing import draw_duel
from ballenvs.duel.game import PAIR_REWARDS, WINNER_NAMES, DuelGame
from ballenvs.render import Canvas, check_render_mode

RENDER_SIZE = 400


class BallDuelEnv(gym.Env):
    """Two balls in a circular ring, seen from above. You are the left ball; the right ball
    is played by ``opponent``. A ball whose centre leaves the ring loses (+1 / -1; both in
    the same step is a draw, 0). The episode is truncated after ``max_steps`` steps.

    Args:
        render_mode: None (default, nothing drawn for people), "rgb_array" or "human".
        obs_type: "pixels" (default): a (obs_size, obs_size, 1) uint8 frame, your ball
            brightest; "state": a float32 vector of 10 (see :class:`StateObserver`).
        obs_size: side of the pixel frame, at least 36.
        opponent: "still", "random", "chaser" (default), "pusher", a model with
            ``predict(obs, deterministic=True)`` or a callable ``obs -> action``; policies
            are fed the mirrored observation of the right ball.
        shaping: weight of a potential-based shaping reward on the difference of the balls'
            distances from the centre; 0 (default) turns it off.
        max_steps: truncation step (1000).
        ring_radius, ball_radius: sizes, in world units.

    Actions: ``Discrete(9)``: 0 = no thrust, 1..8 = thrust N, NE, E, SE, S, SW, W, NW.
    Info: ``rewards`` = (left, right) unshaped game rewards, ``winner`` = "left", "right",
    "draw" or None while playing.
    """

    metadata = {"render_modes": ["human", "rgb_array"], "render_fps": 30}

    def __init__(
        self,
        render_mode: str | None = None,
        obs_type: str = "pixels",
        obs_size: int = 64,
        opponent: Any = "chaser",
        shaping: float = 0.0,
        max_steps: int = 1000,
        ring_radius: float = 1.0,
        ball_radius: float = 0.1,
    ) -> None:
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.game = DuelGame(
            None,
            obs_type=obs_type,
            obs_size=obs_size,
            opponent=opponent,
            shaping=shaping,
            max_steps=max_steps,
            ring_radius=ring_radius,
            ball_radius=ball_radius,
        )
        self.observation_space = self.game.observation_space
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._winner: str | None = None
        self._canvas = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"BallDuel-v0 takes no reset options, got {options!r}")
        self.game.reset_games([self.np_random])
        self._winner = None
        if self.render_mode == "human":
            self.render()
        return self.game.observe(LEFT), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        action = check_action(action, N_ACTIONS)
        reward, terminated, truncated, winner = self.game.step(action, [self.np_random])
        self._winner = WINNER_NAMES[winner]
        info = {"rewards": PAIR_REWARDS[winner], "winner": self._winner}
        if self.render_mode == "human":
            self.render()
        return self.game.observe(LEFT), reward, terminated, truncated, info

    def opponent_observation(self) -> np.ndarray:
        """What the right ball sees: the learner's observation with roles swapped, x mirrored."""
        return self.game.observe(RIGHT)

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn('render() called with render_mode=None; make the env with render_mode="rgb_array" or "human"')
            return None
        if self._canvas is None:
            extent = self.game.physics.position_bound
            self._canvas = Canvas(self.render_mode, RENDER_SIZE, -extent, extent, self.metadata["render_fps"], "BallDuel-v0")
        draw_duel(self._canvas, self.game.core.state, self.game.physics, self.game.core.steps, self._winner)
        return self._canvas.finish()

    def close(self) -> None:
        if self._canvas is not None:
            self._canvas.close()
            self._canvas = None
