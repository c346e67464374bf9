"""A run's counters and the schedules that run over them (epsilon, the learning rate's progress):
saved in checkpoints, so that a resumed run continues its schedules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def linear_epsilon(step: int, horizon: int, initial: float, final: float, fraction: float) -> float:
    """Epsilon falls linearly from ``initial`` to ``final`` over the first ``fraction`` of
    ``horizon`` env steps, then stays at ``final`` (stable-baselines3's schedule)."""
    end = fraction * horizon
    if end <= 0:
        return final
    return initial + (final - initial) * min(1.0, step / end)


@dataclass
class Progress:
    """Counters of a run, saved in checkpoints so that a resumed run continues the schedule.

    The epsilon and learning-rate schedules run over ``exploration_horizon`` env steps. A run
    resumed for T more steps stretches them over all its steps so far plus T, as
    stable-baselines3 does with ``reset_num_timesteps=False``: a ``lin_`` learning rate goes on
    falling from where that puts it, to 0 at the resumed run's end.
    """

    num_timesteps: int = 0
    episodes: int = 0
    exploration_horizon: int = 0  # env steps the epsilon and learning rate schedules are spread over

    def progress_remaining(self) -> float:
        return max(1.0 - self.num_timesteps / self.exploration_horizon, 0.0) if self.exploration_horizon > 0 else 1.0

    def epsilon(self, config: Any) -> float:
        """Epsilon now, for a config with the exploration_* keys."""
        return linear_epsilon(
            self.num_timesteps,
            self.exploration_horizon,
            config.exploration_initial_eps,
            config.exploration_final_eps,
            config.exploration_fraction,
        )
