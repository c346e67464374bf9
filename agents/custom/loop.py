"""What every custom agent's training loop shares: its counters and schedules (saved in
checkpoints), the hooks the command line fills in, the episode log, observations as tensors."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import torch


def linear_epsilon(step: int, horizon: int, initial: float, final: float, fraction: float) -> float:
    """Epsilon falls linearly from ``initial`` to ``final`` over the first ``fraction`` of
    ``horizon`` env steps, then stays at ``final`` (stable-baselines3's schedule)."""
    end = fraction * horizon
    if end <= 0:
        return final
    return initial + (final - initial) * min(1.0, step / end)


def rows_of(observation: Any, rows: Any) -> Any:
    """Some rows of a batch of observations: an array, or a dict of arrays (or tensors)."""
    return {key: value[rows] for key, value in observation.items()} if isinstance(observation, dict) else observation[rows]


def to_tensor(observation: Any, device: torch.device) -> Any:
    if isinstance(observation, dict):
        return {key: torch.as_tensor(value, device=device) for key, value in observation.items()}
    return torch.as_tensor(observation, device=device)


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


class Hooks:
    """What the loops call at their milestones; the CLI fills these in (checkpoints, evaluation, logs)."""

    def on_step(self, progress: Progress) -> bool:
        """After every vector-env step (cheap checks only); return False to stop training."""
        return True

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        """After every ``log_every_episodes`` finished episodes."""


class EpisodeLog:
    """The last 100 episodes' returns and lengths, handed to ``hooks.on_episodes`` every few episodes."""

    def __init__(self, hooks: Hooks, start_steps: int, every: int = 4) -> None:
        self.hooks, self.every, self.start_steps = hooks, every, start_steps
        self.returns: deque = deque(maxlen=100)
        self.lengths: deque = deque(maxlen=100)
        self.start = time.perf_counter()

    def add(self, progress: Progress, episodes: list[tuple[float, int]], loss: torch.Tensor | None) -> None:
        for episode_return, length in episodes:
            self.returns.append(episode_return)
            self.lengths.append(length)
            progress.episodes += 1
            if progress.episodes % self.every == 0:
                elapsed = max(time.perf_counter() - self.start, 1e-9)
                self.hooks.on_episodes(
                    progress, self.returns, self.lengths, loss, (progress.num_timesteps - self.start_steps) / elapsed
                )
