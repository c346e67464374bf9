"""Playing a policy for whole episodes: the evaluations every trainer runs while it trains, and a
trained model played on its run's env (``agents.evaluate``, ``agents.compare``).

Episode k of a set is reset with seed ``seed + k``, so every evaluation of a run plays the same
episodes (its curve moves with the policy, not with the luck of the draw) and a policy can be
paired with a reference policy on exactly the episodes it played.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agents.artifacts.runs import EVALUATIONS, atomic_path
from agents.common.errors import UsageError
from agents.environments.envs import make_eval_vec
from agents.session.console import Console
from ballenvs.reference import Episodes, win_rate


def play_episodes(
    policy: Any,
    env: Any,
    episodes: int,
    seed: int,
    deterministic: bool = True,
    frames: list | None = None,
    on_games: Callable[[int], None] | None = None,
) -> tuple[Episodes, np.ndarray]:
    """Play ``episodes`` episodes with ``policy.predict`` on a stable-baselines3 VecEnv of n envs,
    n at a time (one forward pass for all): episode k is the first episode of an env reset with
    seed ``seed + k``, so the result does not depend on n. Returns the episodes and their lengths.
    ``frames``: a list to append the first env's picture to before every step (a rendered env);
    ``on_games(finished)`` after every step, with the episodes over so far."""
    n = env.num_envs
    returns, lengths = np.zeros(episodes), np.zeros(episodes, dtype=np.int64)
    final_infos: list[dict[str, Any]] = [{}] * episodes
    for first in range(0, episodes, n):
        count = min(n, episodes - first)
        env.seed(seed + first)
        observation = env.reset()
        playing = np.arange(n) < count  # envs past the last episode only keep the batch full
        while playing.any():
            if frames is not None and playing[0]:
                frames.append(env.render())
            action, _ = policy.predict(observation, deterministic=deterministic)
            observation, reward, dones, infos = env.step(action)
            rows = np.flatnonzero(playing)
            returns[first + rows] += reward[rows]
            lengths[first + rows] += 1
            for i in np.flatnonzero(playing & dones):
                final_infos[first + i] = infos[i]
            playing &= ~dones
            if on_games is not None:
                on_games(first + count - int(np.count_nonzero(playing)))
    return Episodes(returns, final_infos, seed), lengths


class Evaluation(NamedTuple):
    """One evaluation's outcome: its step, mean return, and win rate against each opponent it
    played (``{"": rate}`` for the run's own env; empty where the game has no winner)."""

    steps: int
    mean_return: float
    win_rates: dict[str, float]


def score(mean_return: float, win_rates: dict[str, float], held_out: Collection[str] = ()) -> float:
    """What ranks a run's evaluations for its best model: in a game with a winner, the lowest win
    rate against the opponents played (a player is as good as its worst match, as
    benchmarks.time_to_skill counts skill: >= 90% against every built-in), the ``held_out`` ones
    aside (players that measure a learner and never pick its model:
    :attr:`ballenvs.reference.Arena.held_out_players`); else the mean return. The best
    model is the evaluation with the highest score, the later of equal ones: win rates of a few
    games tie often once a learner wins them all, and the first perfect evaluation is no better
    than the last, only trained less (BallSumo-v0, eleven seeds: it kept a model up to 6 points
    below the final one against a built-in; benchmarks/RESULTS.md)."""
    counted = [rate for name, rate in win_rates.items() if name not in held_out]
    return min(counted) if counted else mean_return


class Evaluator:
    """Deterministic episodes on separate envs every ``eval_freq`` steps, as stable-baselines3's
    EvalCallback: the results in ``evaluations.npz`` (its layout, where the RL Zoo's plots read it),
    the figures in the logger (``eval/mean_reward``, ``eval/mean_ep_length``, ``eval/win_rate``),
    the best model kept (``save_best``: :func:`score`'s, the ``held_out`` players aside), and one
    line on the console. ``envs`` maps a name to each env to play
    (``""``: the run's own env; a self-play run is evaluated against each built-in opponent,
    ``eval/win_rate_vs_<name>``, and its return is the mean over them). ``on_evaluation(steps,
    mean_return)`` after each: how agents.tune hears a trial's evaluations (and prunes it, by raising)."""

    def __init__(
        self,
        envs: dict[str, Any],
        episodes: int,
        seed: int,
        run_dir: Path,
        logger: Any,
        console: Console,
        save_best: Callable[[], None],
        on_evaluation: Callable[[int, float], None] | None = None,
        held_out: Collection[str] = (),
    ) -> None:
        self.envs, self.episodes, self.seed = envs, episodes, seed
        self.run_dir, self.logger, self.console, self.save_best = run_dir, logger, console, save_best
        self.on_evaluation, self.held_out = on_evaluation, held_out
        self.best_score = -np.inf
        self.start_time = time.time()
        self.history: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": []}
        self.latest: Evaluation | None = None  # what the last evaluation found, for the learner (Hooks)

    def __call__(self, policy: Any, num_timesteps: int) -> float:
        played = {name: play_episodes(policy, env, self.episodes, self.seed) for name, env in self.envs.items()}
        returns = np.concatenate([episodes.returns for episodes, _ in played.values()])
        lengths = np.concatenate([lengths for _, lengths in played.values()])
        self.history["timesteps"].append(num_timesteps)
        self.history["results"].append(returns)
        self.history["ep_lengths"].append(lengths)
        with atomic_path(self.run_dir / EVALUATIONS) as tmp, open(tmp, "wb") as file:
            arrays: dict[str, Any] = {key: np.array(values) for key, values in self.history.items()}
            np.savez(file, **arrays)
        mean = float(returns.mean())
        # Steps and seconds beside each evaluation: agents.compare draws curves against both.
        self.logger.record("time/total_timesteps", num_timesteps)
        self.logger.record("time/time_elapsed", round(time.time() - self.start_time, 2))
        self.logger.record("eval/mean_reward", mean)
        self.logger.record("eval/mean_ep_length", float(lengths.mean()))
        line = f"eval at {num_timesteps:,} steps: return {mean:.3f} +- {returns.std():.3f} over {len(returns)} episodes"
        wins = {name: win_rate(episodes) for name, (episodes, _) in played.items()}
        if all(rate is not None for rate in wins.values()):
            for name, rate in wins.items():
                self.logger.record(f"eval/win_rate_vs_{name}" if name else "eval/win_rate", rate)
            line += ", wins " + ", ".join(
                f"{rate:.0%}" if not name else f"{rate:.0%} vs {name}" for name, rate in wins.items()
            )
        rates = {name: float(rate) for name, rate in wins.items() if rate is not None}
        if (ranked := score(mean, rates, self.held_out)) >= self.best_score:
            self.best_score = ranked
            self.save_best()
            line += " (new best: best_model saved)"
        self.console.write(line)
        self.latest = Evaluation(num_timesteps, mean, rates)
        if self.on_evaluation is not None:
            self.on_evaluation(num_timesteps, mean)
        return mean

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


# -- playing a trained model ------------------------------------------------------------------------


@dataclass
class EvalResult:
    episodes: Episodes
    lengths: np.ndarray
    outcomes: Counter = field(default_factory=Counter)  # games with a winner: left / right / draw / time-out

    @property
    def returns(self) -> np.ndarray:
        return self.episodes.returns

    def summary(self, env_id: str) -> str:
        r, n = self.returns, len(self.returns)
        line = f"{env_id}: {n} episodes, return {r.mean():.3f} +- {r.std():.3f}, length {self.lengths.mean():.1f}"
        if self.outcomes:
            o = self.outcomes
            line += f"; wins {o['left']} / draws {o['draw'] + o['time-out']} / losses {o['right']}"
            line += f" (win rate {o['left'] / n:.0%}; {o['time-out']} draws by time-out)"
        return line


def evaluate(
    model: Any,
    config: dict[str, Any],
    episodes: int,
    seed: int = 0,
    deterministic: bool = True,
    env_overrides: dict[str, Any] | None = None,
    frames: list | None = None,
    on_games: Callable[[int], None] | None = None,
) -> EvalResult:
    """Play ``episodes`` episodes of the run's env (with ``env_overrides``) with ``model.predict``;
    ``frames``: a list to collect every step's picture in (the env must render "rgb_array");
    ``on_games``: as :func:`play_episodes`'."""
    hyper = config["hyperparams"]
    env_kwargs = {**(hyper.get("env_kwargs") or {}), **(env_overrides or {})}
    try:
        env = make_eval_vec(config["env_id"], env_kwargs, hyper.get("frame_stack"), episodes)
    except (ValueError, TypeError) as error:
        raise UsageError(f"{config['env_id']} options {env_kwargs}: {error}") from None
    try:
        played, lengths = play_episodes(model, env, episodes, seed, deterministic, frames, on_games)
    finally:
        env.close()
    outcomes = Counter(info["winner"] or "time-out" for info in played.final_infos if "winner" in info)
    return EvalResult(played, lengths, outcomes)
