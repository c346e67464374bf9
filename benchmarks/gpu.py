"""The GPU path, measured: both DQNs and PQN side by side on the device, and time to skill.

    python -m benchmarks.gpu [--device auto] [--quick]

Prints the device, then measures in one process, while learning, the env steps per second of
stable-baselines3's DQN and of the custom agent (plain, ``--amp``, ``--compile``) at equal
hyperparameters on BallDuel-v0 pixels and UAVGrid-v0 (their zoo_configs/dqn.yml sections, the
native vector env), and PQN on its own section, each beside its floor (benchmarks.floor: its
section's arithmetic alone on the device); then one short run per trainer on BallDuel-v0
(100k steps, evaluated against chaser every 10k steps): the wall-clock to a 90% win rate.
Writes gpu.json and, unless ``--quick``, the ``gpu`` block of RESULTS.md. ``--amp`` and
``--compile`` apply on CUDA only; on a CPU their rows say so. ``--quick`` is a smoke pass of
a minute or less on a CPU (the tests run it).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.common.errors import note
from agents.session.cli import Parser, add_device_flags, describe_device, resolve_device, run_cli
from benchmarks.common import RESULTS_DIR, Measurements, machine, progress_flag, row, write_json
from benchmarks.floor import dqn_floor, pqn_floor, section_of
from benchmarks.train_throughput import custom_rate, pqn_rate, sb3_rate

ENVS = ("BallDuel-v0", "UAVGrid-v0")
SKILL_WIN_RATE = 0.9
#: name -> (trainer module, its extra flags)
SKILL_RUNS = {
    "SB3 DQN": ("agents.sb3_train", []),
    "custom DQN": ("agents.custom_train", []),
    "PQN": ("agents.custom_train", ["--algo", "pqn"]),
}
#: A quick pass's runs update within its 400 steps (a run that would not is refused).
QUICK_FIRST_UPDATE = {"SB3 DQN": "learning_starts=64", "custom DQN": "learning_starts=64", "PQN": "rollout_steps=8"}


def throughput(device: str, steps: int, learning_starts: int) -> list[dict[str, Any]]:
    rows = []
    cuda = device == "cuda"
    for env_id in ENVS:
        overrides = {"learning_starts": learning_starts}
        # Each trainer's floor on this device: its section's arithmetic alone (benchmarks.floor).
        plain = dqn_floor(section_of(env_id, "dqn", overrides), device, double_q=False).steps_per_s
        double = dqn_floor(section_of(env_id, "custom", overrides), device).steps_per_s
        floors = {"SB3 DQN": plain, "PQN (its config)": pqn_floor(section_of(env_id, "pqn"), device).steps_per_s}
        sb3 = sb3_rate(env_id, steps, "native", overrides, device=device)["steps_per_s"]
        entries: dict[str, float | None] = {"SB3 DQN": sb3}
        entries["custom"] = custom_rate(env_id, steps, "native", overrides, device=device)["steps_per_s"]
        entries["custom --amp"] = (
            custom_rate(env_id, steps, "native", overrides, device=device, amp=True)["steps_per_s"] if cuda else None
        )
        entries["custom --compile"] = (
            custom_rate(env_id, steps, "native", overrides, device=device, compile=True)["steps_per_s"] if cuda else None
        )
        entries["PQN (its config)"] = pqn_rate(env_id, steps, device=device)["steps_per_s"]
        for name, rate in entries.items():
            floor = floors.get(name, double)
            rows.append(
                {
                    "env": env_id,
                    "trainer": name,
                    "steps_per_s": rate,
                    "x_sb3": None if rate is None else rate / sb3,
                    "floor": floor,
                    "of_floor": None if rate is None else rate / floor,
                }
            )
    return rows


def time_to_skill(
    device: str, timesteps: int, eval_freq: int, episodes: int, progress: bool = True, quick: bool = False
) -> list[dict[str, Any]]:
    """One run per trainer on BallDuel-v0 against chaser: wall-clock to the first evaluation at a 90%
    win rate (each run showing its progress, unless ``progress`` is False)."""
    import csv

    rows = []
    with tempfile.TemporaryDirectory(prefix="ballenvs-gpu-") as folder:
        for name, (module, extra) in SKILL_RUNS.items():
            argv = [
                "--env",
                "BallDuel-v0",
                "--timesteps",
                str(timesteps),
                "--eval-freq",
                str(eval_freq),
                "--eval-episodes",
                str(episodes),
            ]
            argv += ["--save-freq", "0", "--device", device, "--log-dir", folder, "--seed", "0", *extra]
            argv += [] if progress else ["--no-progress"]
            argv += ["--hyperparams", QUICK_FIRST_UPDATE[name]] if quick else []
            start = time.perf_counter()
            run_dir = importlib.import_module(module).main(argv)
            total = time.perf_counter() - start
            reached = None
            with open(Path(run_dir) / "progress.csv") as file:
                for line in csv.DictReader(file):
                    if line.get("eval/win_rate") and float(line["eval/win_rate"]) >= SKILL_WIN_RATE:
                        reached = (int(float(line["time/total_timesteps"])), float(line["time/time_elapsed"]))
                        break
            rows.append({"trainer": name, "seconds": total, "reached": reached})
    return rows


def format_result(result: dict) -> str:
    lines = [
        f"Device: {result['device_name']}",
        "",
        "| env | trainer | env steps/s while learning | x SB3 DQN | its floor (env steps/s) | of its floor |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in result["throughput"]:
        rate = "n/a (CUDA only)" if r["steps_per_s"] is None else f"{r['steps_per_s']:,.0f}"
        ratio = "" if r["x_sb3"] is None else f"{r['x_sb3']:.2f}"
        of_floor = "" if r["of_floor"] is None else f"{r['of_floor']:.2f}"
        lines.append(row(r["env"], r["trainer"], rate, ratio, f"{r['floor']:,.0f}", of_floor))
    lines += [
        "",
        f"BallDuel-v0 against chaser, {result['skill_timesteps']:,} steps per run, "
        f"evaluated every {result['skill_eval_freq']:,}:",
        "",
    ]
    lines += ["| trainer | first evaluation >= 90% wins | run's wall-clock |", "|---|---|---:|"]
    for r in result["skill"]:
        reached = "not reached" if r["reached"] is None else f"{r['reached'][1]:.0f} s ({r['reached'][0]:,} steps)"
        lines.append(row(r["trainer"], reached, f"{r['seconds']:.0f} s"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(prog="python -m benchmarks.gpu", description=__doc__.splitlines()[0])
    add_device_flags(parser)
    parser.add_argument("--quick", action="store_true", help="a smoke pass with tiny sizes; RESULTS.md is not touched")
    parser.add_argument("--results", default=str(RESULTS_DIR / "RESULTS.md"), help="the results file to update")
    progress_flag(parser)
    args = parser.parse_args(argv)
    if not args.quick:
        from benchmarks.__main__ import check_results_file

        check_results_file(Path(args.results))
    device, threads = resolve_device(args.device, args.threads)
    note(f"device: {describe_device(device, threads)}")
    steps, learning_starts = (200, 64) if args.quick else (4000, 1000)
    timesteps, eval_freq, episodes = (400, 200, 2) if args.quick else (100_000, 10_000, 20)
    with Measurements(1, not args.no_progress) as shown:
        rates = throughput(device, steps, learning_starts)
        shown.result(f"training throughput: {len(rates)} trainers and envs measured")
    result = {
        "benchmark": "gpu",
        "machine": machine(),
        "device": device,
        "device_name": describe_device(device, threads),
        "throughput": rates,
        "skill_timesteps": timesteps,
        "skill_eval_freq": eval_freq,
        "skill": time_to_skill(device, timesteps, eval_freq, episodes, not args.no_progress, args.quick),
    }
    print(format_result(result))
    print(f"wrote {write_json('gpu', result)}")
    if not args.quick:
        from benchmarks.__main__ import record

        record(Path(args.results), "gpu", "python -m benchmarks.gpu", str(result["machine"]), format_result(result))
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
