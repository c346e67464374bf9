"""Does training slow down as it goes? Our second user's symptom, measured.

    python -m benchmarks.episode_flatness [--episodes 200] [--anti-episodes 20]

The custom agent trains on BallDuel-v0 (pixels, 4 stacked frames, the config's network)
with weights-only checkpoints every ``--save-freq`` steps. Per episode it records the wall
time per 1000 steps and the process memory (RSS); the first 20 episodes are set against the
last 20. Beside it runs the user's anti-pattern for a few episodes: render every step and
save the whole model with its optimizer, pickled, after every episode.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.algorithms.dqn import DQNAgent, learn, replay_buffer, settings
from agents.common.configuration.config import build_section
from agents.common.configuration.config_files import load_section, shipped_config
from agents.common.configuration.registry import ALGORITHMS
from agents.environments.envs import make_vec
from agents.environments.steps import VecEnvSteps
from agents.session.checkpoint import save_checkpoint
from agents.session.cli import Parser, run_cli
from agents.session.hooks import Hooks
from agents.session.progress import Progress
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, row, write_json

ENV_ID = "BallDuel-v0"
WINDOW = 20  # episodes compared at each end


def rss_mib() -> float:
    """Resident memory of this process (Linux /proc; NaN elsewhere)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class EpisodeClock(Hooks):
    """Per finished episode: seconds per 1000 steps and RSS; optionally the anti-pattern."""

    def __init__(
        self, agent: DQNAgent, env: Any, folder: Path, save_freq: int, anti_pattern: bool, episodes: int, learning_starts: int
    ) -> None:
        self.agent, self.env, self.folder = agent, env, folder
        self.save_freq, self.anti_pattern = save_freq, anti_pattern
        self.episodes, self.learning_starts = episodes, learning_starts
        self.rows: list[dict[str, float]] = []
        self._last_time, self._last_steps = time.perf_counter(), 0
        self._next_save = save_freq

    def on_step(self, progress: Progress) -> bool:
        if self.anti_pattern:
            self.env.env.env_method("render")  # draw a picture every step, shown to no one
        elif progress.num_timesteps >= self._next_save:
            save_checkpoint(self.folder / "checkpoint.pt", self.agent, progress)
            self._next_save += self.save_freq
        return len(self.rows) < self.episodes

    def on_episodes(self, progress, returns, lengths, loss, fps) -> None:
        if self.anti_pattern:
            # The whole model and optimizer, pickled, after every episode.
            torch.save(
                {"model": self.agent.q, "optimizer": self.agent.optimizer}, self.folder / f"episode_{progress.episodes}.pt"
            )
        now = time.perf_counter()
        steps = progress.num_timesteps - self._last_steps
        # Only episodes that were learning throughout count: the first ones start before it.
        if self._last_steps >= self.learning_starts:
            self.rows.append(
                {
                    "seconds_per_1000_steps": (now - self._last_time) / steps * 1000,
                    "rss_mib": rss_mib(),
                    "steps": progress.num_timesteps,
                }
            )
        self._last_time, self._last_steps = now, progress.num_timesteps


def measure(episodes: int, anti_pattern: bool, save_freq: int, overrides: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    section = build_section(ENV_ID, load_section(shipped_config("dqn.yml"), ENV_ID), overrides, ALGORITHMS["custom"].schema)
    env_kwargs = {**section.env_kwargs, **({"render_mode": "rgb_array"} if anti_pattern else {})}
    env = VecEnvSteps(make_vec(ENV_ID, env_kwargs, 1, seed, "dummy", section.frame_stack))
    config, spec = settings(section, env.observation_space, env.action_space)
    agent = DQNAgent(spec, config, "cpu", seed=seed)
    buffer = replay_buffer(config, env.observation_space, "cpu", seed=seed)
    bytes_per_transition = 2 * sum(store[0].nbytes for store in buffer.observations.values()) + 12
    rss_before = rss_mib()
    with tempfile.TemporaryDirectory() as folder:
        clock = EpisodeClock(agent, env, Path(folder), save_freq, anti_pattern, episodes, config.learning_starts)
        # Epsilon falls over the first 10000 steps; the clock stops training after `episodes`.
        progress = Progress(exploration_horizon=100_000)
        learn(agent, env, progress, 10**9, clock, buffer, log_every_episodes=1)
    env.close()
    rows = clock.rows
    first = np.mean([r["seconds_per_1000_steps"] for r in rows[:WINDOW]])
    last = np.mean([r["seconds_per_1000_steps"] for r in rows[-WINDOW:]])
    return {
        "episodes": len(rows),
        "steps": rows[-1]["steps"],
        "first_s_per_1000": first,
        "last_s_per_1000": last,
        "slowdown": last / first,
        "rss_growth_mib": rows[-1]["rss_mib"] - rows[0]["rss_mib"],
        "buffer_growth_mib": (rows[-1]["steps"] - rows[0]["steps"]) * bytes_per_transition / 2**20,
        "rss_start_mib": rss_before,
        "per_episode": rows,
    }


def run(episodes: int, anti_episodes: int, save_freq: int) -> dict[str, Any]:
    # Learning from the start, so the first episodes already pay for training.
    overrides = {"learning_starts": 64, "buffer_size": 50_000}
    good = measure(episodes, False, save_freq, overrides)
    anti = measure(anti_episodes, True, save_freq, overrides)
    return {
        "benchmark": "episode_flatness",
        "machine": machine(),
        "save_freq": save_freq,
        "overrides": overrides,
        "ours": good,
        "anti_pattern": anti,
        "anti_vs_ours": anti["first_s_per_1000"] / good["first_s_per_1000"],
    }


def format_table(result: dict) -> str:
    good, anti = result["ours"], result["anti_pattern"]
    verdict = "met" if good["slowdown"] <= 1.1 else "MISSED"
    header: tuple[str, ...] = ("loop", "episodes", f"s / 1000 steps, first {WINDOW}", f"s / 1000 steps, last {WINDOW}")
    header += ("last / first",)
    header += ("RSS growth (MiB)", "replay data added (MiB)")

    def timings(loop: dict) -> tuple:
        return (loop["episodes"], f"{loop['first_s_per_1000']:.2f}", f"{loop['last_s_per_1000']:.2f}")

    def memory(loop: dict) -> tuple:
        return (f"{loop['rss_growth_mib']:.0f}", f"{loop['buffer_growth_mib']:.0f}")

    return "\n".join(
        [
            row(*header),
            "|---|---:|---:|---:|---:|---:|---:|",
            row(
                f"custom agent, checkpoints every {result['save_freq']} steps",
                *timings(good),
                f"{good['slowdown']:.2f} (goal <= 1.1: {verdict})",
                *memory(good),
            ),
            row(
                "anti-pattern: render every step, full pickle every episode",
                *timings(anti),
                f"{anti['slowdown']:.2f}",
                *memory(anti),
            ),
            row(f"anti-pattern / ours, first {WINDOW}", "", "", "", f"{result['anti_vs_ours']:.2f}x slower", "", ""),
        ]
    )


format_result = format_table  # what python -m benchmarks writes into RESULTS.md


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--anti-episodes", type=int, default=WINDOW)
    parser.add_argument("--save-freq", type=int, default=5000, help="checkpoint every this many env steps")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [
            ("--episodes", args.episodes, (1, 100_000)),
            ("--anti-episodes", args.anti_episodes, (1, 100_000)),
            ("--save-freq", args.save_freq, (1, 10_000_000)),
        ]
    )
    with Measurements(1, not args.no_progress) as shown:
        result = run(args.episodes, args.anti_episodes, args.save_freq)
        shown.write(f"episode_flatness on {result['machine']}: {ENV_ID}, 1 env")
        shown.result(format_table(result))
    print(f"wrote {write_json('episode_flatness', result)}")
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
