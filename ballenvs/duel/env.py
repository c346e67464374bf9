"""``BallDuel-v0``: two balls in a ring; push the other one out.

The gymnasium faces of :class:`ballenvs.duel.game.DuelGame`: :class:`BallDuelEnv` plays one
game, :class:`BallDuelVectorEnv` (``gym.make_vec``) plays N at once through the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from ballenvs._checks import check_action, check_options
from ballenvs.directions import N_ACTIONS
from ballenvs.duel.core import LEFT, RIGHT
from ballenvs.duel.drawing import draw_duel
from ballenvs.duel.game import OPTIONS, PAIR_REWARDS, PLAYING, WINNER_NAMES, DuelGame
from ballenvs.render import Renderer
from ballenvs.vector import BatchedVectorEnv

RENDER_SIZE = 400
METADATA = {"render_modes": ["human", "rgb_array"], "render_fps": 30}


def _renderer(render_mode: str | None, game: DuelGame) -> Renderer:
    extent = game.physics.position_bound
    return Renderer(render_mode, RENDER_SIZE, -extent, extent, METADATA["render_fps"], "BallDuel-v0")


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

    metadata = METADATA

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        check_options("BallDuel-v0", options, OPTIONS)
        self.game = DuelGame(None, **options)
        self._renderer = _renderer(render_mode, self.game)
        self.render_mode = render_mode
        self.observation_space = self.game.observation_space
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._winner: str | None = None

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
        core = self.game.core
        return self._renderer.render(lambda canvas: draw_duel(canvas, core.state, self.game.physics, core.steps, self._winner))

    def close(self) -> None:
        self._renderer.close()


class BallDuelVectorEnv(BatchedVectorEnv):
    """``num_envs`` BallDuel games stepped together: ``gym.make_vec("BallDuel-v0", num_envs=256)``.

    Takes the options of :class:`BallDuelEnv`. Env i reset with seed s + i plays exactly as a
    :class:`BallDuelEnv` reset with seed s + i. Infos hold ``rewards`` (N, 2) and ``winner``
    (N,) arrays. ``render()`` draws the first env.
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
        check_options("BallDuel-v0", options, OPTIONS)
        self.game = DuelGame(self.num_envs, **options)
        self._renderer = _renderer(render_mode, self.game)
        self.render_mode = render_mode
        self._set_spaces(self.game.observation_space)
        self._winner = np.full(self.num_envs, PLAYING)

    def _reset_games(self, games: np.ndarray) -> None:
        self.game.reset_games(self.rngs, games)
        self._winner[games] = PLAYING

    def _step_games(self, actions: np.ndarray, rngs: Sequence[np.random.Generator], active: np.ndarray) -> tuple:
        reward, terminated, truncated, winner = self.game.step(actions, rngs)
        self._winner = np.where(active, winner, PLAYING)
        info = self._for_every_env(
            {
                # .take: 10x cheaper than fancy indexing along the first axis of a 2-D table.
                "rewards": _PAIR_REWARDS.take(self._winner, axis=0),
                "winner": _WINNER_NAMES[self._winner],
            }
        )
        return np.where(active, reward, 0.0), terminated & active, truncated & active, info

    def _observe(self) -> np.ndarray:
        return self.game.observe(LEFT)

    def render(self) -> list[np.ndarray] | None:
        core = self.game.core
        winner = _WINNER_NAMES[self._winner[0]]
        frame = self._renderer.render(
            lambda canvas: draw_duel(canvas, core.game(0), self.game.physics, int(core.steps[0]), winner)
        )
        return None if frame is None else [frame]

    def close_extras(self, **kwargs: Any) -> None:
        self._renderer.close()


_PAIR_REWARDS = np.array(PAIR_REWARDS)
_WINNER_NAMES = np.array(WINNER_NAMES, dtype=object)
