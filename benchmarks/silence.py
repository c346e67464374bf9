"""How long each documented long command stays silent when its output is piped (a log, a job
scheduler): the longest stretch between two lines, and the whole run's wall-clock.

    python -m benchmarks.silence                 # every command below, each stopped after 60 s
    python -m benchmarks.silence --only agents.record benchmarks.floor --limit 120

The commands are their documented examples (README, docs, RESULTS), run one at a time in a
scratch folder (their runs, datasets and JSON files go there). A command stopped at the limit
counts its silence up to then; the goal (issue 54): no stretch over 10 s.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, children_stopped, machine, progress_flag, row, write_json

#: The goal: no command is silent for longer.
MOST_SILENT_S = 10.0
#: name -> the documented command line (run with this Python, in a scratch folder).
COMMANDS: dict[str, list[str]] = {
    "agents.train": ["-m", "agents.train", "--log-dir", "runs"],
    "agents.record": ["-m", "agents.record", "planner", "--opponent", "chaser", "--episodes", "1000"]
    + ["--env-kwargs", "obs_type=state", "--data-path", "datasets"],
    "agents.league": ["-m", "agents.league", "random", "chaser", "pusher", "anchor", "sprinter", "champion"]
    + ["--env", "BallSumo-v0", "--games", "20", "--log-dir", "runs"],
    "agents.exploit": ["-m", "agents.exploit", "champion", "--search-only", "--games", "20"],
    "agents.exploit learned": ["-m", "agents.exploit", "champion", "--budget", "20000", "--games", "20"],
    "agents.compare": ["-m", "agents.compare", "--env", "UAVGrid-v0", "--agents", "custom", "pqn", "--seeds", "3"]
    + ["--timesteps", "60000", "--score-episodes", "10", "--log-dir", "runs"],
    "agents.tune": ["-m", "agents.tune", "--env", "UAVGrid-v0", "--trials", "2", "--log-dir", "runs"],
    "ballenvs.duel.match": ["-m", "ballenvs.duel.match", "--round-robin", "--env", "BallSumo-v0"],
    "ballenvs.uav.baselines": ["-m", "ballenvs.uav.baselines"],
    "benchmarks.env_throughput": ["-m", "benchmarks.env_throughput"],
    "benchmarks.train_throughput": ["-m", "benchmarks.train_throughput"],
    "benchmarks.naive_vs_batched": ["-m", "benchmarks.naive_vs_batched"],
    "benchmarks.episode_flatness": ["-m", "benchmarks.episode_flatness"],
    "benchmarks.loop_pieces": ["-m", "benchmarks.loop_pieces"],
    "benchmarks.floor": ["-m", "benchmarks.floor"],
    "benchmarks.frame_probe": ["-m", "benchmarks.frame_probe"],
    "benchmarks.threads": ["-m", "benchmarks.threads"],
    "benchmarks.tune_workers": ["-m", "benchmarks.tune_workers", "--no-record"],
    "benchmarks.outsiders": ["-m", "benchmarks.outsiders"],
    "benchmarks.uav_search": ["-m", "benchmarks.uav_search"],
    # Two pairs, so that it ends within the limit and removes its worktree itself.
    "benchmarks.against_commit": ["-m", "benchmarks.against_commit", "--pairs", "2"],
    "benchmarks.gpu": ["-m", "benchmarks.gpu"],
    "benchmarks.rllib_sampling": ["-m", "benchmarks.rllib_sampling"],
}
#: What a command needs that the test install may lack.
NEEDS = {"benchmarks.rllib_sampling": "ray"}


def silence(argv: list[str], folder: Path, limit: float) -> dict[str, float | bool | int]:
    """Run ``python ARGV`` in ``folder`` with its output piped, stopped after ``limit`` seconds:
    its wall-clock, its longest stretch without a line (up to its end or the stop), its exit."""
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    env["BALLENVS_BENCH_OUT"] = str(folder)
    start = time.monotonic()
    last, longest = [start], [0.0]
    process = subprocess.Popen(
        [sys.executable, *argv], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )

    def read() -> None:
        assert process.stdout is not None
        for _ in iter(process.stdout.readline, b""):
            now = time.monotonic()
            longest[0], last[0] = max(longest[0], now - last[0]), now

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with children_stopped([process]):
        try:
            process.wait(timeout=limit)
            stopped = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            stopped = True
    reader.join(timeout=10)
    end = time.monotonic()
    return {
        "seconds": end - start,
        "longest_silence_s": max(longest[0], end - last[0]),
        "stopped": stopped,
        "exit": process.returncode,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = Parser(prog="python -m benchmarks.silence", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(COMMANDS), default=list(COMMANDS), help="these commands alone")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds a command runs before it is stopped")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--limit", args.limit, (1, 36_000))])
    rows = []
    with Measurements(len(args.only), not args.no_progress) as shown:
        shown.write(f"silence on {machine()}: each command piped, stopped after {args.limit:.0f} s")
        shown.write(row("command", "ran (s)", "longest silence (s)", f"within {MOST_SILENT_S:.0f} s"))
        shown.write(row(*["---"] * 4))
        for name in args.only:
            needs = NEEDS.get(name)
            if needs is not None and importlib.util.find_spec(needs) is None:
                shown.result(row(name, "", "", f"not run: needs {needs}"))
                continue
            with tempfile.TemporaryDirectory(prefix="ballenvs-silence-") as scratch:
                result = silence(COMMANDS[name], Path(scratch), args.limit)
            rows.append({"command": name, **result})
            ran = f"{result['seconds']:.0f}" + (" (stopped)" if result["stopped"] else f" (exit {result['exit']})")
            within = "yes" if result["longest_silence_s"] <= MOST_SILENT_S else "NO"
            shown.result(row(name, ran, f"{result['longest_silence_s']:.1f}", within))
    write_json("silence", {"machine": machine(), "limit_s": args.limit, "rows": rows})
    return rows


if __name__ == "__main__":
    sys.exit(run_cli(main))
