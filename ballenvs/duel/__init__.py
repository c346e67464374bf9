"""BallDuel: two balls in a ring, pixel or state observations, replaceable opponent."""

from ballenvs.duel.env import BallDuelEnv
from ballenvs.duel.opponents import BUILTIN_OPPONENTS

__all__ = ["BallDuelEnv", "BUILTIN_OPPONENTS"]
