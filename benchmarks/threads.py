"""Sharing the machine: a trainer's wall-clock alone, beside a busy core, and two started together,
for torch's old defaults against ours.

    python -m benchmarks.threads [--trainer sb3_train|custom_train] [--env BallDuel-v0]
        [--timesteps 8000] [--repeats 1]

Each run is a whole ``python -m agents.<trainer>`` process (no evaluation, no checkpoints), timed
from start to exit. The settings:

- ``spinning, all cores``: what torch did before ``agents.common.threads``: one thread per core,
  and libgomp's default wait (its threads spin before they sleep);
- ``1 thread``;
- ``auto``: today's default (``--threads auto``: the cores free at start; idle threads sleep).

The loads: ``alone``; ``beside a busy core`` (a process spinning on one core, as a browser or a
compile would); ``two together`` (two identical runs started at once, as two seeds; the figure is
the later one's exit). The ratio that matters is each loaded figure over the same setting alone:
sharing 2 cores fairly costs at most 2x.

Which count pays (``--threads auto`` takes no more than the work pays for, agents/common/threads.py):

    python -m benchmarks.threads --crossover   # one update of the main network and the state MLP, by batch
    python -m benchmarks.threads --sections    # every shipped section, whole processes, 1 and 2 threads

``--crossover`` times updates (forward, backward, Adam) in this process, one thread and two in turn,
over growing batches: the multiply-adds at which two first beat one. ``--sections`` runs each
shipped section's training as a whole process with ``--threads 1`` and ``--threads 2`` in turn
(``--repeats`` pairs), and prints each one's steps a second, the update's multiply-adds and the count
``auto`` picks for it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents.environments.ids import check_env_id
from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, children_stopped, machine, progress_flag, write_json

SETTINGS = {
    # An empty OMP_WAIT_POLICY is libgomp's own default (spin, then sleep); agents/__init__ keeps it.
    "spinning, all cores": {"OMP_WAIT_POLICY": "", "threads": str(os.cpu_count() or 1)},
    "1 thread": {"threads": "1"},
    "auto": {"threads": "auto"},
}
LOADS = ("alone", "beside a busy core", "two together")
SPIN = "while True: pass"


def _command(args: argparse.Namespace, threads: str, log_dir: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        f"agents.{args.trainer}",
        "--env",
        args.env,
        "--timesteps",
        str(args.timesteps),
        "--threads",
        threads,
        "--eval-freq",
        "0",
        "--save-freq",
        "0",
        "--no-progress",
        "--log-dir",
        log_dir,
    ]


def timed_runs(args: argparse.Namespace, setting: dict[str, str], load: str) -> float:
    """Seconds from the start of the run (or runs) to the last exit, under ``load``."""
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env.update({key: value for key, value in setting.items() if key != "threads"})
    copies = 2 if load == "two together" else 1
    with children_stopped([]) as children:
        if load == "beside a busy core":
            children.append(subprocess.Popen([sys.executable, "-c", SPIN]))
            time.sleep(1.0)  # the busy core is busy before the run starts
        with tempfile.TemporaryDirectory() as log_dir:
            start = time.perf_counter()
            runs = [
                subprocess.Popen(
                    _command(args, setting["threads"], log_dir), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                )
                for _ in range(copies)
            ]
            children.extend(runs)
            for run in runs:
                _, stderr = run.communicate()
                if run.returncode != 0:
                    command = " ".join(_command(args, setting["threads"], log_dir))
                    raise RuntimeError(f"{command} exited {run.returncode}: {stderr.decode()[-2000:]}")
            return time.perf_counter() - start


#: The shipped sections, timed whole: (algo, env id, config or None for the algorithm's, steps to time).
SECTIONS = [
    ("dqn", "BallDuel-v0", None, 20_000),  # the main command's
    ("custom", "BallDuel-v0", None, 20_000),
    ("custom", "UAVGrid-v0", None, 60_000),
    ("custom", "BallSumo-v0", None, 30_000),
    ("ppo", "BallSumo-v0", None, 60_000),
    ("pqn", "UAVGrid-v0", None, 100_000),
    ("custom", "UAVGridImage-v0", None, 20_000),
    ("ppo", "BallSumo-v0", "benchmarks/configs/ppo_pixels_from_nothing.yml", 30_000),
]


def section_work(algo: str, env_id: str, config: str | None) -> int | None:
    """The update's multiply-adds ``--threads auto`` reads for this section (agents/trainer/setup.py)."""
    from agents.common.configuration.config import build_section
    from agents.common.configuration.config_files import load_section
    from agents.common.configuration.registry import ALGORITHMS
    from agents.environments.envs import probe_spaces
    from agents.trainer.setup import update_work

    algorithm = ALGORITHMS[algo]
    section = build_section(env_id, load_section(config or algorithm.config_path(), env_id), {}, algorithm.schema)
    options = {key: value for key, value in section.env_kwargs.items() if not (key == "opponent" and value == "self")}
    observation_space, action_space = probe_spaces(env_id, options, section.frame_stack)
    return update_work(section, observation_space, action_space)


def timed_section(algo: str, env_id: str, config: str | None, timesteps: int, threads: str) -> tuple[float, float]:
    """A whole training process on one section: (wall seconds, its training's steps a second)."""
    with tempfile.TemporaryDirectory() as log_dir:
        command = [sys.executable, "-m", "agents.train", "--algo", algo, "--env", env_id, "--timesteps", str(timesteps)]
        command += [*(["--config", config] if config else []), "--threads", threads, "--eval-freq", "0"]
        command += ["--save-freq", "0", "--final-games", "0", "--no-progress", "--log-dir", log_dir]
        env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
        start = time.perf_counter()
        run = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if run.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {run.returncode}: {run.stderr[-2000:]}")
        summary = next(Path(log_dir).rglob("summary.yml")).read_text()
        rate = float(next(line.split(":")[1] for line in summary.splitlines() if line.startswith("steps_per_s")))
        return wall, rate


def sections(repeats: int, show: bool) -> list[dict]:
    """Every shipped section with 1 and 2 threads in turn, ``repeats`` pairs: the medians."""
    from agents.common.threads import choose_threads

    rows = []
    with Measurements(len(SECTIONS) * repeats, show) as shown:
        for algo, env_id, config, timesteps in SECTIONS:
            runs: dict[str, list[tuple[float, float]]] = {"1": [], "2": []}
            for _ in range(repeats):
                for threads in runs:
                    runs[threads].append(timed_section(algo, env_id, config, timesteps, threads))
                shown.result(f"  {algo} {env_id} {config or ''}: {runs['1'][-1][0]:.1f} s / {runs['2'][-1][0]:.1f} s")
            work = section_work(algo, env_id, config)
            wall = {t: statistics.median(w for w, _ in runs[t]) for t in runs}
            rate = {t: statistics.median(r for _, r in runs[t]) for t in runs}
            pairs = [one[0] / two[0] for one, two in zip(runs["1"], runs["2"], strict=True)]
            rows.append({
                "algo": algo, "env": env_id, "config": config, "timesteps": timesteps, "work": work,
                "wall": wall, "steps_per_s": rate, "ratio_1_over_2": statistics.median(pairs),
                "auto": choose_threads("auto", work)[0],
            })  # fmt: skip
    return rows


def crossover(batches: list[int], samples: int) -> list[dict]:
    """Updates of the main network (the Nature CNN on 4 stacked 36x36 frames) and of the state MLP
    ([256, 256] on 11 numbers), one thread and two in turn, at each batch size (``samples`` a round)."""
    import numpy as np
    import torch
    from gymnasium import spaces

    from agents.algorithms.networks import QNetwork, network_spec
    from agents.common.networks.lean_cnn import multiply_adds

    networks: dict[str, tuple[spaces.Box, str, dict]] = {
        "Nature CNN, 4x36x36": (spaces.Box(0, 255, (4, 36, 36), np.uint8), "CnnPolicy", {}),
        "MLP [256, 256], 11 numbers": (spaces.Box(-1, 1, (11,), np.float32), "MlpPolicy", {"net_arch": [256, 256]}),
    }
    rows = []
    for name, (space, policy, kwargs) in networks.items():
        network = QNetwork(network_spec(space, 9, policy, kwargs))
        optimizer = torch.optim.Adam(network.parameters(), fused=True)
        per_sample = multiply_adds(network, torch.as_tensor(space.sample()[None]))
        for batch in batches:
            observations = torch.as_tensor(space.sample()[None]).repeat(batch, *([1] * len(space.shape)))
            seconds: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(3):  # rounds, the counts in turn
                for threads in seconds:
                    torch.set_num_threads(threads)
                    start = time.perf_counter()
                    for _ in range(max(2, samples // batch)):
                        loss = network(observations).square().mean()
                        optimizer.zero_grad(set_to_none=True)
                        loss.backward()
                        optimizer.step()
                    seconds[threads].append((time.perf_counter() - start) / max(2, samples // batch))
            best = {threads: min(times) for threads, times in seconds.items()}
            rows.append({"network": name, "batch": batch, "work": 3 * per_sample * batch, "seconds": best})
    return rows


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(prog="python -m benchmarks.threads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainer", choices=("sb3_train", "custom_train"), default="sb3_train")
    parser.add_argument("--env", default="BallDuel-v0")
    parser.add_argument("--timesteps", type=int, default=8000)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each cell; the median counts")
    parser.add_argument("--settings", nargs="+", choices=tuple(SETTINGS), default=list(SETTINGS))
    parser.add_argument("--crossover", action="store_true", help="updates by batch, 1 and 2 threads: where 2 pay")
    parser.add_argument("--sections", action="store_true", help="every shipped section, whole runs, 1 and 2 threads")
    progress_flag(parser)
    args = parser.parse_args(argv)
    if args.crossover or args.sections:
        return which_count_pays(args)
    check_env_id(args.env)
    check_ranges([("--timesteps", args.timesteps, (1, 10_000_000)), ("--repeats", args.repeats, (1, 100))])
    print(f"threads on {machine()}: agents.{args.trainer} --env {args.env} --timesteps {args.timesteps}", flush=True)
    table: dict[str, dict[str, float]] = {}
    with Measurements(len(args.settings) * len(LOADS), not args.no_progress) as shown:
        for name in args.settings:
            table[name] = {}
            for load in LOADS:
                times = sorted(timed_runs(args, SETTINGS[name], load) for _ in range(args.repeats))
                table[name][load] = times[len(times) // 2]
                shown.result(f"  {name:20s} {load:20s} {table[name][load]:7.1f} s")
    print(f"\n{'setting':20s} " + " ".join(f"{load:>20s}" for load in LOADS) + "   (x: over the same setting alone)")
    for name, row in table.items():
        cells = [f"{row['alone']:19.1f}s"] + [f"{row[load]:8.1f}s ({row[load] / row['alone']:5.2f}x)" for load in LOADS[1:]]
        print(f"{name:20s} " + " ".join(f"{cell:>20s}" for cell in cells))
    result = {"machine": machine(), "trainer": args.trainer, "env": args.env, "timesteps": args.timesteps, "seconds": table}
    write_json("threads", result)
    return result


def which_count_pays(args: argparse.Namespace) -> dict:
    """``--crossover`` and ``--sections``: their tables, side by side in one run."""
    check_ranges([("--repeats", args.repeats, (1, 100))])
    result: dict = {"machine": machine()}
    if args.crossover:
        rows = crossover([32, 64, 128, 256, 512, 1024, 2048, 4096], samples=8192)
        print(f"\nupdates on {machine()} (best of 3 rounds, 1 and 2 threads in turn)")
        print(f"{'network':28s} {'batch':>6s} {'multiply-adds':>14s} {'1 thread':>10s} {'2 threads':>10s} {'2 / 1':>6s}")
        for row in rows:
            one, two = row["seconds"][1], row["seconds"][2]
            times = f"{one * 1e3:8.2f}ms {two * 1e3:8.2f}ms {two / one:6.2f}"
            print(f"{row['network']:28s} {row['batch']:6d} {row['work'] / 1e6:13,.0f}M {times}")
        result["crossover"] = rows
    if args.sections:
        rows = sections(args.repeats, not args.no_progress)
        print(f"\nshipped sections on {machine()}, whole processes, 1 and 2 threads in turn ({args.repeats} pairs, medians)")
        print(f"{'section':58s} {'update':>8s} {'1 thread':>15s} {'2 threads':>15s} {'1 / 2 wall':>10s} {'auto':>5s}")
        for row in rows:
            name = f"{row['algo']} {row['env']}" + (f" ({Path(row['config']).name})" if row["config"] else "")
            one, two = (f"{row['steps_per_s'][t]:,.0f}/s {row['wall'][t]:5.1f}s" for t in ("1", "2"))
            print(
                f"{name:58s} {row['work'] / 1e6:7,.0f}M {one:>15s} {two:>15s} {row['ratio_1_over_2']:10.2f} {row['auto']:5d}"
            )
        result["sections"] = rows
    write_json("threads_pay", result)
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
