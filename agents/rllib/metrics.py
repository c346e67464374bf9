"""Who is winning, as RLlib metrics: in zero-sum self-play the learner's mean return says nothing
(its two sides' returns cancel), so each finished game's winner is logged per opponent:
``win_rate/<opponent>``, the share of the last games the learner won (as ``agents.evaluate``
counts: a draw or a time-out is no win), read from the left agent's last info
(:mod:`agents.rllib.duel_pool`) or, in a one-player run against a built-in player, from the env's
``winner`` info."""

from __future__ import annotations

from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from agents.rllib.duel_pool import LEFT_AGENT

#: Games each win rate is the mean over.
WINDOW = 200


def game_result(episode: Any, opponent: str | None) -> tuple[str, float] | None:
    """(opponent, 1.0 if the learner won else 0.0) of a finished game; None for a game that names
    no winner (UAVGrid)."""
    if isinstance(episode, MultiAgentEpisode):
        info = episode.get_infos(-1, agent_ids=LEFT_AGENT).get(LEFT_AGENT, {})
        opponent = info.get("opponent")
    else:
        info = episode.get_infos(-1)
    if opponent is None or "winner" not in info:
        return None
    return opponent, float(info["winner"] == "left")


class WinRates(RLlibCallback):
    """Logs ``win_rate/<opponent>`` for every finished game of a two-player env."""

    def on_episode_end(self, *, episode: Any, env_runner: Any = None, metrics_logger: Any = None, **kwargs: Any) -> None:
        opponent = (env_runner.config.env_config or {}).get("opponent") if env_runner is not None else None
        result = game_result(episode, opponent)
        if result is not None and metrics_logger is not None:
            metrics_logger.log_value(("win_rate", result[0]), result[1], reduce="mean", window=WINDOW)
