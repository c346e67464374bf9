"""Playing a policy for whole episodes, and the evaluations every trainer runs while it trains.

Episode k of a set is reset with seed ``seed + k``, so every evaluation of a run plays the same
episodes (its curve moves with the policy, not with the luck of the draw) and a policy can be
paired with a reference policy on exactly the episodes it played.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.console import Console
from agents.runs import atomic_path
from ballenvs.reference import Episodes


def play_episodes(policy: Any, env: Any, episodes: int, seed: int, deterministic: bool = True) -> tuple[Episodes, np.ndarray]:
    """Play ``episodes`` episodes with ``policy.predict`` on a stable-baselines3 VecEnv of n envs,
    n at a time (one forward pass for all): episode k is the first episode of an env reset with
    seed ``seed + k``, so the result does not depend on n. Returns the episodes and their lengths."""
    n = env.num_envs
    returns, lengths, final_infos = np.zeros(episodes), np.zeros(episodes, dtype=np.int64), [{}] * episodes
    for first in range(0, episodes, n):
        count = min(n, episodes - first)
        env.seed(seed + first)
        observation = env.reset()
        playing = np.arange(n) < count  # envs past the last episode only keep the batch full
        while playing.any():
            action, _ = policy.predict(observation, deterministic=deterministic)
            observation, reward, dones, infos = env.step(action)
            rows = np.flatnonzero(playing)
            returns[first + rows] += reward[rows]
            lengths[first + rows] += 1
            for i in np.flatnonzero(playing & dones):
                final_infos[first + i] = infos[i]
            playing &= ~dones
    return Episodes(returns, final_infos, seed), lengths


def win_rate(episodes: Episodes) -> float | None:
    """The learner's (the left side's) share of wins, for games that name a winner."""
    winners = [info.get("winner", "") for info in episodes.final_infos]
    if "" in winners:
        return None
    return float(np.mean([winner == "left" for winner in winners]))


class Evaluator:
    """Deterministic episodes on a separate env every ``eval_freq`` steps, as stable-baselines3's
    EvalCallback: the results in ``eval/evaluations.npz`` (its layout), the figures in the
    logger (``eval/mean_reward``, ``eval/mean_ep_length``, ``eval/win_rate``), the best model
    kept (``save_best``), and one line on the console."""

    def __init__(
        self,
        env: Any,
        episodes: int,
        seed: int,
        run_dir: Path,
        logger: Any,
        console: Console,
        save_best: Callable[[], None],
    ) -> None:
        self.env, self.episodes, self.seed = env, episodes, seed
        self.run_dir, self.logger, self.console, self.save_best = run_dir, logger, console, save_best
        self.best_mean = -np.inf
        self.start_time = time.time()
        self.history: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": []}

    def __call__(self, policy: Any, num_timesteps: int) -> float:
        played, lengths = play_episodes(policy, self.env, self.episodes, self.seed)
        returns = played.returns
        self.history["timesteps"].append(num_timesteps)
        self.history["results"].append(returns)
        self.history["ep_lengths"].append(lengths)
        folder = self.run_dir / "eval"
        folder.mkdir(exist_ok=True)
        with atomic_path(folder / "evaluations.npz") as tmp, open(tmp, "wb") as file:
            np.savez(file, **{key: np.array(values) for key, values in self.history.items()})
        mean, wins = float(returns.mean()), win_rate(played)
        # Steps and seconds beside each evaluation: agents.compare draws curves against both.
        self.logger.record("time/total_timesteps", num_timesteps)
        self.logger.record("time/time_elapsed", round(time.time() - self.start_time, 2))
        self.logger.record("eval/mean_reward", mean)
        self.logger.record("eval/mean_ep_length", float(lengths.mean()))
        line = f"eval at {num_timesteps:,} steps: return {mean:.3f} +- {returns.std():.3f} over {self.episodes} episodes"
        if wins is not None:
            self.logger.record("eval/win_rate", wins)
            line += f", wins {wins:.0%}"
        if mean > self.best_mean:
            self.best_mean = mean
            self.save_best()
            line += " (new best: best_model saved)"
        self.console.note(line)
        return mean

    def close(self) -> None:
        self.env.close()
