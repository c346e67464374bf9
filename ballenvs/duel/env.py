"""``BallDuel-v0``: two balls in a ring; push the other one out.

The gymnasium faces (:mod:`ballenvs.faces`) of :class:`ballenvs.duel.game.DuelGame`:
:class:`BallDuelEnv` plays one game, :class:`BallDuelVectorEnv` (``gym.make_vec``) N at once.
"""

from __future__ import annotations

import numpy as np

from ballenvs.duel.core import RIGHT
from ballenvs.duel.game import RENDER_FPS, DuelGame
from ballenvs.faces import GameEnv, GameVectorEnv, metadata_for


class BallDuelEnv(GameEnv):
    """Two balls in a circular ring, seen from above. You are the left ball; the right ball
    is played by ``opponent``. A ball whose centre leaves the ring loses (+1 / -1; both in
    the same step is a draw, 0). ``gym.make`` truncates episodes at 1000 steps (its
    ``max_episode_steps`` changes that).

    Args:
        render_mode: None (default, nothing drawn for people), "rgb_array" or "human".
        max_episode_steps: the env's own time limit (see :class:`ballenvs.faces.GameEnv`).
        obs_type: "pixels" (default): a (obs_size, obs_size, 1) uint8 frame, your ball
            brightest; "state": a float32 vector of 10 (see :class:`StateObserver`).
        obs_size: side of the pixel frame, at least 36.
        opponent: "still", "random", "chaser" (default), "pusher", a model with
            ``predict(obs, deterministic=True)`` or a callable ``obs -> action``; policies
            are fed the mirrored observation of the right ball.
        shaping: weight of a potential-based shaping reward on the difference of the balls'
            distances from the centre; 0 (default) turns it off.
        ring_radius, ball_radius: sizes, in world units.

    Actions: ``Discrete(9)``: 0 = no thrust, 1..8 = thrust N, NE, E, SE, S, SW, W, NW.
    Info: ``rewards`` = (left, right) unshaped game rewards, ``winner`` = "left", "right",
    "draw" or None while playing.
    """

    game_class = DuelGame
    metadata = metadata_for(RENDER_FPS)

    def opponent_observation(self) -> np.ndarray:
        """What the right ball sees: the learner's observation with roles swapped, x mirrored."""
        return self.game.duel.observe(RIGHT)


class BallDuelVectorEnv(GameVectorEnv):
    """``num_envs`` BallDuel games stepped together: ``gym.make_vec("BallDuel-v0", num_envs=256)``.

    Takes the options of :class:`BallDuelEnv`; behaves as ``SyncVectorEnv`` over them (infos
    included: ``rewards`` and ``winner`` are object arrays of the single env's values).
    """

    game_class = DuelGame
    metadata = metadata_for(RENDER_FPS, vector=True)
