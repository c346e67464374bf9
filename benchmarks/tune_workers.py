"""Studies shared by workers: trials per hour with 2 workers against 1, and a worker killed mid-trial.

    python -m benchmarks.tune_workers --storage postgresql://postgres@127.0.0.1:54329/ballenvs [--trials 20]

Side by side on one study storage (PostgreSQL, or a journal file without ``--storage``), with
identical short trials (UAVGrid-v0, custom DQN, ``--timesteps`` steps, no pruning, a search
space that leaves the compute per step alone): ``--trials`` trials with ``--workers 1``, then
with ``--workers 2``, timed from the command's start to its end. Then the failure case: two
commands on the same study, as two machines would run them (each ``--max-total-trials``
``--trials``, one torch thread each), the first SIGKILLed in the middle of a trial after a
few trials: its trial must end failed (the heartbeat) and the other command must finish the
study, with no trial run twice and no result lost. Writes tune_workers.json and the
``tune_workers`` block of RESULTS.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from agents.session.cli import Parser, run_cli
from benchmarks.common import (
    RESULTS_DIR,
    Measurements,
    check_ranges,
    children_stopped,
    machine,
    progress_flag,
    row,
    write_json,
)

#: Sampled values that leave a trial's cost alone, so that trials are alike.
SPACE = {
    "learning_rate": {"type": "float", "low": 1.0e-4, "high": 1.0e-3, "log": True, "schedule": "linear"},
    "gamma": {"type": "categorical", "choices": [0.98, 0.99, 0.995]},
    "exploration_fraction": {"type": "float", "low": 0.05, "high": 0.3},
}


def tune_command(folder: Path, storage: str | None, study: str, trials: int, timesteps: int, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "agents.tune", "--env", "UAVGrid-v0", "--algo", "custom", "--trials", str(trials)]
    command += ["--timesteps", str(timesteps), "--eval-freq", str(timesteps), "--eval-episodes", "5", "--pruner", "none"]
    command += ["--search-space", str(folder / "space.yml"), "--log-dir", str(folder), "--study-name", study, "--seed", "0"]
    command += ["--heartbeat", "2"]
    return command + (["--storage", storage] if storage else []) + list(extra)


def load_trials(folder: Path, storage: str | None, study: str) -> list[Any]:
    import optuna

    from agents.tune import open_storage

    return optuna.load_study(study_name=study, storage=open_storage(storage, folder / study, 2)).get_trials(deepcopy=False)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def killed_worker(folder: Path, storage: str | None, study: str, trials: int, timesteps: int) -> dict[str, Any]:
    """Two commands on one study, the first killed mid-trial once it has finished some."""
    import optuna

    command = tune_command(folder, storage, study, trials, timesteps, "--max-total-trials", str(trials))
    one_thread = {**os.environ, "OMP_NUM_THREADS": "1"}
    with children_stopped([]) as children:
        first = subprocess.Popen(command, env=one_thread, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.append(first)
        time.sleep(1.0)
        second = subprocess.Popen(command, env=one_thread, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.append(second)
        killed_trial = None
        while killed_trial is None and first.poll() is None:
            time.sleep(0.2)
            try:
                found = load_trials(folder, storage, study)
            except (KeyError, ValueError):
                continue
            done = [t for t in found if t.state.is_finished()]
            mine = [t for t in found if t.state == optuna.trial.TrialState.RUNNING and _pid(t) == first.pid]
            if len(done) >= 3 and mine:
                first.send_signal(signal.SIGKILL)
                first.wait()
                killed_trial = mine[0].number
        second.wait()
    found = load_trials(folder, storage, study)
    run_dirs = [t.user_attrs.get("run_dir") for t in found if t.state == optuna.trial.TrialState.COMPLETE]
    states = [t.state.name for t in found]
    return {
        "killed_trial": killed_trial,
        "killed_trial_state": next((t.state.name for t in found if t.number == killed_trial), None),
        "complete": states.count("COMPLETE"),
        "failed": states.count("FAIL"),
        "other_states": sorted({s for s in states if s not in ("COMPLETE", "FAIL")}),
        "trial_numbers_unique": len({t.number for t in found}) == len(found),
        "results_kept": all(d and Path(d).is_dir() for d in run_dirs)
        and all(t.value is not None for t in found if t.state == optuna.trial.TrialState.COMPLETE),
        "second_exit": second.returncode,
    }


def _pid(trial: Any) -> int | None:
    worker = str(trial.user_attrs.get("worker", ""))
    pid = worker.rpartition(":")[2]
    return int(pid) if pid.isdigit() else None


def format_result(result: dict[str, Any]) -> str:
    kill = result["killed"]
    lines = [
        f"{result['trials']} trials of {result['timesteps']:,} steps (UAVGrid-v0, custom DQN) on {result['storage_kind']}:",
        "",
        "| workers | wall-clock | trials per hour | x 1 worker |",
        "|---:|---:|---:|---:|",
    ]
    one = result["seconds"]["1"]
    for workers, seconds in result["seconds"].items():
        lines.append(row(workers, f"{seconds:.0f} s", f"{result['trials'] * 3600 / seconds:.0f}", f"{one / seconds:.2f}"))
    lines += [
        "",
        f"Worker killed mid-trial (trial {kill['killed_trial']}): that trial ended {kill['killed_trial_state']}; "
        f"the other command finished the study with {kill['complete']} complete and {kill['failed']} failed trials "
        f"(exit {kill['second_exit']}); trial numbers unique: {kill['trial_numbers_unique']}; "
        f"every result kept: {kill['results_kept']}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default=None, help="a PostgreSQL URL (default: a journal file per study)")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--results", default=str(RESULTS_DIR / "RESULTS.md"), help="the results file to update")
    parser.add_argument("--no-record", action="store_true", help="leave RESULTS.md alone")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--trials", args.trials, (1, 10_000)), ("--timesteps", args.timesteps, (1, 10_000_000))])
    stamp = f"{os.getpid()}-{int(time.time())}"
    with tempfile.TemporaryDirectory(prefix="ballenvs-tune-bench-") as tmp:
        folder = Path(tmp)
        (folder / "space.yml").write_text(yaml.safe_dump(SPACE))
        seconds = {}
        with Measurements(3, not args.no_progress) as shown:
            for workers in (1, 2):
                study = f"bench-{workers}w-{stamp}"
                seconds[str(workers)] = timed(
                    tune_command(folder, args.storage, study, args.trials, args.timesteps, "--workers", str(workers))
                )
                shown.result(f"{workers} worker(s): {args.trials} trials in {seconds[str(workers)]:.0f} s")
            killed = killed_worker(folder, args.storage, f"bench-kill-{stamp}", args.trials, args.timesteps)
            shown.result(f"a worker killed mid-trial: trial {killed['killed_trial']} ended {killed['killed_trial_state']}")
    result = {
        "benchmark": "tune_workers",
        "machine": machine(),
        "storage_kind": "PostgreSQL" if args.storage else "a journal file",
        "trials": args.trials,
        "timesteps": args.timesteps,
        "seconds": seconds,
        "killed": killed,
    }
    text = format_result(result)
    print(text)
    print(f"wrote {write_json('tune_workers', result)}")
    if not args.no_record:
        from benchmarks.__main__ import record

        command = "python -m benchmarks.tune_workers" + (" --storage postgresql://..." if args.storage else "")
        record(Path(args.results), "tune_workers", command, result["machine"], text)
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
