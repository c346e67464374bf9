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
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

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


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(prog="python -m benchmarks.threads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainer", choices=("sb3_train", "custom_train"), default="sb3_train")
    parser.add_argument("--env", default="BallDuel-v0")
    parser.add_argument("--timesteps", type=int, default=8000)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each cell; the median counts")
    parser.add_argument("--settings", nargs="+", choices=tuple(SETTINGS), default=list(SETTINGS))
    progress_flag(parser)
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(run_cli(main))
