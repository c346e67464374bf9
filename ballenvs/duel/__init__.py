"""BallDuel: two balls in a ring, pixel or state observations, replaceable opponent.

``parallel_env(**options)`` and ``env(**options)`` give the two-player game through PettingZoo's
parallel and AEC APIs (the optional ``pettingzoo`` extra; imported only when called).
"""

from typing import Any

from ballenvs import SUMO_RULES
from ballenvs.duel.env import BallDuelEnv
from ballenvs.duel.roster import BUILTIN_PLAYERS


def _pettingzoo() -> Any:
    try:
        from ballenvs.duel import pettingzoo
    except ModuleNotFoundError as error:
        if error.name != "pettingzoo":
            raise
        raise ImportError("BallDuel's two-player env needs PettingZoo: pip install 'ballenvs[pettingzoo]'") from None
    return pettingzoo


def parallel_env(**options: Any) -> Any:
    """BallDuel with both balls played by agents "left" and "right", as a PettingZoo ParallelEnv."""
    return _pettingzoo().parallel_env(**options)


def env(**options: Any) -> Any:
    """The two-player BallDuel as a PettingZoo AEC env."""
    return _pettingzoo().env(**options)


__all__ = ["BallDuelEnv", "BUILTIN_PLAYERS", "SUMO_RULES", "parallel_env", "env"]
