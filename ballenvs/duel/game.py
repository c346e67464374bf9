"""BallDuel games against an opponent, with observations and rewards.

This is the whole game as a gym face needs it, still free of gymnasium's Env API: the
single env drives one game, the vector env N games, through the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ballenvs._checks import check_choice, check_float, check_int
from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import MIRRORED_ACTION
from ballenvs.duel.core import LEFT, RIGHT, DuelCore, DuelPhysics
from ballenvs.duel.observe import MIN_OBS_SIZE, OBS_TYPES, PixelObserver, StateObserver, side_view
from ballenvs.duel.opponents import make_player

#: The options a BallDuel env takes, besides render_mode.
OPTIONS = ("obs_type", "obs_size", "opponent", "shaping", "max_steps", "ring_radius", "ball_radius")

#: ``info["winner"]`` and ``info["rewards"]`` (left, right, unshaped) by winner code.
WINNER_NAMES = (None, "left", "right", "draw")
PAIR_REWARDS = ((0.0, 0.0), (1.0, -1.0), (-1.0, 1.0), (0.0, 0.0))
PLAYING, LEFT_WINS, RIGHT_WINS, DRAW = 0, 1, 2, 3


class DuelGame:
    """The learner (left) against one opponent, in one game (``num_games=None``, Python
    floats) or in N games at once (numpy arrays)."""

    def __init__(
        self,
        num_games: int | None = None,
        obs_type: str = "pixels",
        obs_size: int = 64,
        opponent: Any = "chaser",
        shaping: float = 0.0,
        max_steps: int = 1000,
        ring_radius: float = 1.0,
        ball_radius: float = 0.1,
    ) -> None:
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        obs_size = check_int("obs_size", obs_size, MIN_OBS_SIZE)
        self.max_steps = check_int("max_steps", max_steps, 1)
        self.shaping = check_float("shaping", shaping)
        self.physics = DuelPhysics(
            ring_radius=check_float("ring_radius", ring_radius, positive=True),
            ball_radius=check_float("ball_radius", ball_radius, positive=True),
        )
        self.core = DuelCore(self.physics, num_games)
        self.xp = self.core.xp
        self._mirrored_action = MIRRORED_ACTION if self.xp is NUMPY else MIRRORED_ACTION.tolist()
        self.opponent = make_player(opponent, self.physics)
        if obs_type == "pixels":
            self.observer: PixelObserver | StateObserver = PixelObserver(self.physics, obs_size)
            self.observation_space: spaces.Box = spaces.Box(0, 255, (obs_size, obs_size, 1), np.uint8)
        else:
            self.observer = StateObserver(self.physics)
            self.observation_space = spaces.Box(self.observer.low, self.observer.high, dtype=np.float32)

    def observe(self, side: int = LEFT) -> np.ndarray:
        """The observation of ``side``: egocentric, and mirrored for the right player."""
        return self.observer.observe(side_view(self.core.state, side), self.xp)

    def reset_games(self, rngs: Sequence[np.random.Generator], games: Any = True) -> None:
        """Restart ``games`` (a bool mask, or True for all); ``rngs`` holds every game's
        generator and only the restarted games draw from theirs."""
        if self.xp is SCALAR:
            self.core.reset(rngs[0].uniform(-1.0, 1.0, size=4).tolist())
            return
        every_game = np.ndim(games) == 0 and bool(games)
        indices = np.arange(len(rngs)) if every_game else np.flatnonzero(games)
        draws = np.empty((len(indices), 4))
        for row, i in zip(draws, indices):
            rngs[i].random(out=row)
        # What uniform(-1.0, 1.0) computes from the same draws, bit for bit, for all games at once.
        self.core.reset((-1.0 + 2.0 * draws).T, None if every_game else indices)

    def step(self, actions: Any, rngs: Sequence[np.random.Generator]) -> tuple[Any, ...]:
        """Play one step with the learner's ``actions`` (an int, or an (N,) array).

        Returns ``(reward, terminated, truncated, winner)``: the learner's (shaped) reward,
        the episode ends and the winner code (see :data:`WINNER_NAMES`). The unshaped game
        rewards are (+1, -1) for a left win, (-1, +1) for a right win, else 0.
        """
        core, xp = self.core, self.xp
        opponent_actions = self.opponent.act(side_view(core.state, RIGHT), xp, lambda: self.observe(RIGHT), rngs)
        if self.shaping:
            potential_before = self._potential()
        left_out, right_out = core.step(actions, self._mirrored_action[opponent_actions])
        terminated = left_out | right_out
        # 0 playing, 1 left wins, 2 right wins, 3 draw: the codes of WINNER_NAMES.
        winner = right_out * LEFT_WINS + left_out * RIGHT_WINS
        reward = right_out * 1.0 - left_out * 1.0
        if self.shaping:
            # Potential-based, with the potential of a finished game taken as 0, so the
            # optimal policy is unchanged (Ng et al., 1999).
            potential_after = xp.where(terminated, 0.0, self._potential())
            reward = reward + self.shaping * (potential_after - potential_before)
        truncated = (core.steps >= self.max_steps) & xp.logical_not(terminated)
        return reward, terminated, truncated, winner

    def _potential(self) -> Any:
        """How much further from the centre the opponent is than the learner, in ring radii."""
        left, right = self.core.distances_from_centre()
        return (right - left) / self.physics.ring_radius
