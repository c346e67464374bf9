"""Environment steps per second, ours beside gymnasium's CartPole-v1 in the same process.

    python -m benchmarks.env_throughput [--steps 20000] [--rounds 3] [--vector-sizes 8 64 256]

Single envs: each made with ``gym.make`` (so with the wrappers a user gets) and stepped with
uniformly random actions, resetting at episode ends. Vector envs: our native ones
(``gym.make_vec(..., vectorization_mode="vector_entry_point")``) beside CartPole's, and
stable-baselines3's DummyVecEnv and SubprocVecEnv over our single envs, counted in env steps
(vector steps x envs). Rounds interleave the envs so that a noisy neighbour slows all of
them alike; the best round of each counts. Runs pinned to one core, as the goals are per
core (SubprocVecEnv's workers inherit the pin: it is there to show the cost of its traffic).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

import ballenvs  # noqa: F401
from agents.environments.envs import make_vec
from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, machine, one_core, progress_flag, row, write_json

REFERENCE = "CartPole-v1"
VECTOR_REFERENCE = "CartPole-v1 vector"

#: What is measured, by row name: every registered id as registered, and the variants that have
#: goals of their own -> (env id, options).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {env_id: (env_id, {}) for env_id in ballenvs.ENV_IDS}
VARIANTS["BallDuel-v0 state"] = ("BallDuel-v0", {"obs_type": "state"})
#: Goals as a fraction of the reference's rate: a single env, and a vector env of 256 envs.
SINGLE_GOALS = {"BallDuel-v0": 0.3, "BallDuel-v0 state": 0.6, "UAVGrid-v0": 0.5, "UAVGridImage-v0": 0.2}
VECTOR_GOALS = {"BallDuel-v0": 0.05, "BallDuel-v0 state": 0.5, "UAVGrid-v0": 0.3}
#: The variants also stepped through SB3's DummyVecEnv and SubprocVecEnv (one process per env:
#: a handful is all two cores can hold).
SB3_VARIANTS, SUBPROC_MOST_ENVS = ("BallDuel-v0 state", "UAVGrid-v0"), 8


def single_env(name: str) -> gym.Env:
    if name == REFERENCE:
        return gym.make(REFERENCE)
    env_id, options = VARIANTS[name]
    return gym.make(env_id, **options)


def native_vector_env(name: str, n: int) -> Any:
    env_id, options = (REFERENCE, {}) if name == VECTOR_REFERENCE else VARIANTS[name]
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **options)


def steps_per_second(env: gym.Env, steps: int, seed: int = 0) -> float:
    actions = [env.action_space.sample() for _ in range(steps)]
    env.reset(seed=seed)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def vector_rate(venv: Any, n_actions: int, vec_steps: int) -> float:
    """Env steps per second of a gymnasium or SB3 vector env under random actions."""
    actions = np.random.default_rng(0).integers(n_actions, size=(vec_steps, venv.num_envs))
    start = time.perf_counter()
    for step_actions in actions:
        venv.step(step_actions)
    return vec_steps * venv.num_envs / (time.perf_counter() - start)


def run_vectors(sizes: list[int], env_steps: int, rounds: int) -> list[dict]:
    rows = []
    for n in sizes:
        vec_steps = max(env_steps // n, 20)
        envs = {name: native_vector_env(name, n) for name in (VECTOR_REFERENCE, *VARIANTS)}
        for venv in envs.values():
            venv.reset(seed=0)
        best = {name: 0.0 for name in envs}
        for _ in range(rounds):
            for name, venv in envs.items():
                best[name] = max(best[name], vector_rate(venv, 2 if name == VECTOR_REFERENCE else 9, vec_steps))
        reference = best[VECTOR_REFERENCE]
        for name, rate in best.items():
            rows.append(
                {
                    "env": name,
                    "vec_env": "native",
                    "num_envs": n,
                    "steps_per_s": rate,
                    "ratio": rate / reference,
                    "goal": VECTOR_GOALS.get(name) if n == 256 else None,
                }
            )
        for name, kind in ((name, kind) for kind in ("dummy", "subproc") for name in SB3_VARIANTS):
            if kind == "subproc" and n > SUBPROC_MOST_ENVS:
                continue
            env_id, options = VARIANTS[name]
            venv = make_vec(env_id, options, n, 0, kind)
            venv.reset()
            rate = max(vector_rate(venv, 9, vec_steps) for _ in range(rounds))
            venv.close()
            rows.append(
                {"env": name, "vec_env": kind, "num_envs": n, "steps_per_s": rate, "ratio": rate / reference, "goal": None}
            )
    return rows


def run(steps: int, rounds: int) -> dict:
    envs = {name: single_env(name) for name in (REFERENCE, *VARIANTS)}
    for env in envs.values():
        env.action_space.seed(0)
    best = {name: 0.0 for name in envs}
    for _ in range(rounds):
        for name, env in envs.items():
            best[name] = max(best[name], steps_per_second(env, steps))
    reference = best[REFERENCE]
    rows = [
        {"env": name, "steps_per_s": rate, "ratio": rate / reference, "goal": SINGLE_GOALS.get(name)}
        for name, rate in best.items()
    ]
    return {"benchmark": "env_throughput", "machine": machine(), "steps": steps, "rounds": rounds, "rows": rows}


def format_vector_table(rows: list[dict]) -> str:
    lines = [f"| env | vec env | envs | env steps/s | x {VECTOR_REFERENCE} | goal |", "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        goal = "" if r["goal"] is None else f">= {r['goal']}x {'(met)' if r['ratio'] >= r['goal'] else '(MISSED)'}"
        lines.append(row(r["env"], r["vec_env"], r["num_envs"], f"{r['steps_per_s']:,.0f}", f"{r['ratio']:.2f}", goal))
    return "\n".join(lines)


def format_table(result: dict) -> str:
    lines = [f"| env | steps/s | x {REFERENCE} | goal |", "|---|---:|---:|---:|"]
    for r in result["rows"]:
        goal = "" if r["goal"] is None else f">= {r['goal']}x {'(met)' if r['ratio'] >= r['goal'] else '(MISSED)'}"
        lines.append(row(r["env"], f"{r['steps_per_s']:,.0f}", f"{r['ratio']:.2f}", goal))
    return "\n".join(lines)


def format_result(result: dict) -> str:
    """Markdown for RESULTS.md: the single-env table, then the vector one."""
    text = format_table(result)
    if result.get("vector_rows"):
        text += "\n\nVector envs (env steps per second, all envs together):\n\n" + format_vector_table(result["vector_rows"])
    return text


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="steps per env per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--vector-sizes",
        type=int,
        nargs="*",
        default=[8, 64, 256],
        help="numbers of envs for the vector benchmarks (none: skip them)",
    )
    parser.add_argument("--vector-steps", type=int, default=100_000, help="env steps per vector env per round")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [
            ("--steps", args.steps, (1, 10_000_000)),
            ("--rounds", args.rounds, (1, 100)),
            ("--vector-sizes", args.vector_sizes, (1, 65_536)),
            ("--vector-steps", args.vector_steps, (1, 100_000_000)),
        ]
    )
    with one_core(), Measurements(1 + len(args.vector_sizes), not args.no_progress) as shown:
        result = run(args.steps, args.rounds)
        shown.write(f"env_throughput on {result['machine']}, {args.steps} random steps x {args.rounds} rounds (best)")
        shown.result(format_table(result))
        if args.vector_sizes:
            shown.write(f"\nvector envs, about {args.vector_steps} env steps per round:")
            result["vector_rows"] = []
            for k, n in enumerate(args.vector_sizes):
                rows = run_vectors([n], args.vector_steps, args.rounds)
                result["vector_rows"] += rows
                table = format_vector_table(rows).splitlines()
                shown.result("\n".join(table if k == 0 else table[2:]))  # the header once
    print(f"wrote {write_json('env_throughput', result)}")
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
