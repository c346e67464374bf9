"""``BallDuel-v0``: two balls in a ring; push the other one out.

The gymnasium faces (:mod:`ballenvs.faces`) of :class:`ballenvs.duel.game.DuelGame`:
:class:`BallDuelEnv` plays one game, :class:`BallDuelVectorEnv` (``gym.make_vec``) N at once.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ballenvs.duel.game import RENDER_FPS, DuelGame
from ballenvs.duel.physics import RIGHT
from ballenvs.faces import GameEnv, GameVectorEnv, metadata_for


class BallDuelEnv(GameEnv):
    """Two balls in a circular ring, seen from above: push the other one out.

    ## Description

    A ring of radius 1 holds two balls of radius 0.1 and equal mass. You are the left ball;
    the right one is played by ``opponent``. Thrust accelerates a ball (a full thrust adds 0.005
    to its velocity a step), its velocity is damped (x0.95 a step) and capped (0.06 a step);
    collisions are elastic and balls never overlap. A
    ball whose centre leaves the ring loses. ``BallSumo-v0`` is the same env with two more
    rules (``floor_slope``, ``time_limit_rule``), so that every game ends and skill decides it.

    ## Action Space

    ``Discrete(9)``: 0 is no thrust, 1 to 8 thrust N, NE, E, SE, S, SW, W, NW (unit
    directions: the diagonals are not stronger).

    ## Observation Space

    - ``obs_type="pixels"`` (the default): ``Box(0, 255, (64, 64, 1), uint8)``, channels last
      (height, width, 1: stable-baselines3's ``VecTransposeImage`` puts them first, as our trainers
      do), the ring from above: floor 40, edge 100, opponent 150, your ball 255 (the brightest);
      ``obs_size`` (at least 36) sets the side. One frame shows no velocity: the trainers stack frames
      (``frame_stack`` in ``zoo_configs/dqn.yml``).
    - ``obs_type="state"``: ``Box(10,) float32``: your x, y, vx, vy, the opponent's x, y, vx,
      vy (positions in ring radii, velocities in units of the speed cap), and each ball's
      distance to the edge. With a clock (BallSumo-v0) an 11th number: the share of the game left.

    ## Rewards

    +1 when the opponent's centre leaves the ring, -1 when yours does, 0 when both leave in
    the same step (a draw) and while playing. ``shaping=w`` adds ``w * (phi' - phi)``, phi the
    opponent's distance from the centre less yours: a potential-based shaping, which leaves
    the optimal policy unchanged; off (0) by default.

    ## Starting State

    The balls start at x = -0.5 (you) and x = +0.5 (the opponent), at rest, each coordinate
    jittered uniformly by up to 0.05, drawn from the env's seed.

    ## Episode End

    Terminated when a ball's centre leaves the ring; truncated after 1000 steps, the
    registered time limit (``gym.make(..., max_episode_steps=K)`` changes it).

    ## Info

    ``rewards``: the (left, right) pair of unshaped game rewards; ``winner``: ``"left"``,
    ``"right"``, ``"draw"``, or None while playing.

    ## Arguments

    - ``obs_type``: ``"pixels"`` or ``"state"``, as above; ``obs_size``: the frame's side;
      ``subpixel``: draw the balls' edges by the share of each pixel they cover (blended with
      what lies under them), so that a move of less than a pixel shows; off by default, and v0's
      frames are unchanged without it. ``pixel_dtype="float32"``: the same frames as float32 in
      [0, 1] (``Box(0, 1, ..., float32)``), for libraries whose CNNs take float frames (Ray
      RLlib's); ``"uint8"`` by default, which our trainers and stable-baselines3's CnnPolicy take.
    - ``opponent``: a built-in player, ``"still"``, ``"random"``, ``"chaser"`` (the default:
      thrusts at you), ``"pusher"`` (gets between you and the centre and pushes you out,
      retreats from the edge), ``"anchor"`` (holds the centre, braking as it comes),
      ``"sprinter"`` (plans 40 steps ahead against a model of pusher), ``"champion"`` (a
      learned player shipped in the package, run with numpy: our PPO in rounds from a planner's
      student), ``"ppo_champion"`` (the second one, one round from the planner's student),
      ``"dqn_champion"`` (the first one, our DQN's self-play), ``"planner"`` (holds each
      action 3, 8 or 16 steps against the worst of many replies, modelling no opponent;
      milliseconds a step per game), ``"planner:2/5/10/20"`` (the planner with holds of its own,
      here stronger against pusher at twice the time); or any object with
      ``predict(obs, deterministic=True)`` (a stable-baselines3 model), or a callable
      ``obs -> action``. Policies see the right ball's mirrored observation
      (:meth:`opponent_observation`), so one policy plays either side; the built-ins read
      the balls, whatever the learner sees.
    - ``shaping``: the weight of the shaping reward, 0 by default.
    - ``ring_radius``, ``ball_radius``: sizes in world units, in [1e-6, 1e6] (the game is
      scale-free).
    - ``floor_slope``, ``time_limit_rule``, ``game_steps``: BallSumo-v0's rules.
    - ``render_mode``: None (the default: nothing is drawn), ``"rgb_array"`` (a 400x400x3
      picture) or ``"human"`` (a window).
    - ``max_episode_steps``: the env's own time limit (see :class:`ballenvs.faces.GameEnv`).

    ## Version History

    - v0: the first version. Its rules are fixed: trajectories are tested against digests
      made before BallSumo-v0 existed.
    """

    game_class = DuelGame
    metadata = metadata_for(RENDER_FPS)

    def opponent_observation(self) -> np.ndarray:
        """What the right ball sees: the learner's observation with roles swapped, x mirrored."""
        return cast(DuelGame, self.game).duel.observe(RIGHT)


class BallDuelVectorEnv(GameVectorEnv):
    """``num_envs`` BallDuel games stepped together: ``gym.make_vec("BallDuel-v0", num_envs=256)``.

    Takes the options of :class:`BallDuelEnv`; behaves as ``SyncVectorEnv`` over them (infos
    included: ``rewards`` and ``winner`` are object arrays of the single env's values).
    """

    game_class = DuelGame
    metadata = metadata_for(RENDER_FPS, vector=True)
