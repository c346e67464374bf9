"""BallSumo-v0's two-player game as PettingZoo names its envs (``from ballenvs.duel import
ballsumo_v0``): BallDuel's faces under BallSumo-v0's rules (:data:`ballenvs.SUMO_RULES`: a domed
floor, a 100-step clock), as ``gym.make("BallSumo-v0")`` plays them.

``parallel_env(**options)`` and ``env(**options)``: agents "left" and "right"; the other options of
:func:`ballenvs.duel.parallel_env` (the optional ``pettingzoo`` extra).
"""

from typing import Any

from ballenvs import SUMO_RULES, duel


def parallel_env(**options: Any) -> Any:
    """BallSumo-v0 played by agents "left" and "right", as a PettingZoo ParallelEnv."""
    return duel.parallel_env(**{**SUMO_RULES, **options})


def env(**options: Any) -> Any:
    """BallSumo-v0 played by agents "left" and "right", as a PettingZoo AEC env."""
    return duel.env(**{**SUMO_RULES, **options})
