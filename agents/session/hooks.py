"""What a training loop calls at its milestones (:class:`Hooks`), the hooks a run hands it
(:class:`RunHooks`: the run's milestones and its logger) and the episode log that feeds them."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch
from stable_baselines3.common.logger import Logger

from agents.session.evaluation import Evaluation
from agents.session.milestones import Milestones
from agents.session.progress import Progress


class Hooks:
    """What the loops call at their milestones; the CLI fills these in (checkpoints, evaluation, logs)."""

    def on_step(self, progress: Progress) -> bool:
        """After every vector-env step (cheap checks only); return False to stop training."""
        return True

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        """After every ``log_every_episodes`` finished episodes."""

    def stop_asked(self) -> bool:
        """Whether a stop was asked for (cheap: read between the minibatches of a long update)."""
        return False

    def record(self, key: str, value: float) -> None:
        """A figure of the algorithm's own, written with the next log line."""

    def evaluate_now(self, progress: Progress) -> Evaluation | None:
        """The run's evaluation played now, before the grid's next (None: the run is not evaluated)."""
        return None

    def latest_evaluation(self) -> Evaluation | None:
        """The run's last evaluation (None before the first, or when the run is not evaluated)."""
        return None


class HooksAround(Hooks):
    """Another's hooks, each call handed on: an algorithm subclasses it to watch the run's
    milestones (its own schedule on every step, evaluations as evidence) without changing them."""

    def __init__(self, hooks: Hooks) -> None:
        self.hooks = hooks

    def on_step(self, progress: Progress) -> bool:
        return self.hooks.on_step(progress)

    def stop_asked(self) -> bool:
        return self.hooks.stop_asked()

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        self.hooks.on_episodes(progress, returns, lengths, loss, fps)

    def record(self, key: str, value: float) -> None:
        self.hooks.record(key, value)

    def evaluate_now(self, progress: Progress) -> Evaluation | None:
        return self.hooks.evaluate_now(progress)

    def latest_evaluation(self) -> Evaluation | None:
        return self.hooks.latest_evaluation()


class Figures(HooksAround):
    """A run's hooks, and with every log row the figures ``figures()`` gives (an algorithm's own)."""

    def __init__(self, hooks: Hooks, figures: Callable[[], dict[str, float]]) -> None:
        super().__init__(hooks)
        self.figures = figures

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        for name, value in self.figures().items():
            self.hooks.record(name, value)
        self.hooks.on_episodes(progress, returns, lengths, loss, fps)


class LoggedAgent(Protocol):
    """What the log reads of an agent (any :class:`agents.session.contract.AlgorithmAgent`)."""

    config: Any
    n_updates: int

    @property
    def optimizer(self) -> torch.optim.Optimizer: ...


class RunHooks(Hooks):
    """The hooks a run hands its loop: the run's milestones after every vector-env step, and every
    few episodes the rollout's figures in the logger under stable-baselines3's keys (one tool
    reads both trainers' progress.csv). Both go down a layer, to :mod:`agents.common`."""

    def __init__(self, milestones: Milestones, logger: Logger, agent: LoggedAgent) -> None:
        self.milestones, self.logger, self.agent = milestones, logger, agent
        self.start_time = time.time()

    def on_step(self, progress: Progress) -> bool:
        # Every row carries the exploration rate, an evaluation's too, as stable-baselines3's do.
        self.logger.record("rollout/exploration_rate", progress.epsilon(self.agent.config))
        return self.milestones.on_step(progress.num_timesteps)

    def stop_asked(self) -> bool:
        return self.milestones.stop.signum is not None

    def record(self, key: str, value: float) -> None:
        self.logger.record(key, value)

    def evaluate_now(self, progress: Progress) -> Evaluation | None:
        return self.milestones.evaluate(progress.num_timesteps)

    def latest_evaluation(self) -> Evaluation | None:
        return self.milestones.latest

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        record = self.logger.record
        record("rollout/ep_rew_mean", float(np.mean(returns)))
        record("rollout/ep_len_mean", float(np.mean(lengths)))
        record("rollout/exploration_rate", progress.epsilon(self.agent.config))
        record("time/episodes", progress.episodes)
        record("time/fps", int(fps))
        record("time/time_elapsed", int(time.time() - self.start_time))
        record("time/total_timesteps", progress.num_timesteps)
        record("train/learning_rate", self.agent.optimizer.param_groups[0]["lr"])
        record("train/n_updates", self.agent.n_updates)
        if loss is not None:
            record("train/loss", float(loss))  # the one device sync, every few episodes
        self.logger.dump(progress.num_timesteps)


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
