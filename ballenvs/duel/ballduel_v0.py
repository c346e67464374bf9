"""BallDuel-v0's two-player game as PettingZoo names its envs: the version in the module's name
(``from ballenvs.duel import ballduel_v0``), as ``pistonball_v6``; a change of behaviour is a new module.

``parallel_env(**options)`` and ``env(**options)``: agents "left" and "right", the options of
:func:`ballenvs.duel.parallel_env` (the optional ``pettingzoo`` extra).
"""

from typing import Any

from ballenvs import duel


def parallel_env(**options: Any) -> Any:
    """BallDuel-v0 played by agents "left" and "right", as a PettingZoo ParallelEnv."""
    return duel.parallel_env(**options)


def env(**options: Any) -> Any:
    """BallDuel-v0 played by agents "left" and "right", as a PettingZoo AEC env."""
    return duel.env(**options)
