"""Environment steps per second, ours beside gymnasium's CartPole-v1 in the same process.

    python -m benchmarks.env_throughput [--steps 20000] [--rounds 3]

Each env is made with ``gym.make`` (so with the wrappers a user gets) and stepped with
uniformly random actions, resetting at episode ends. Rounds interleave the envs so that a
noisy neighbour slows all of them alike; the best round of each counts. Runs pinned to one
core, as the goals are per core.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import gymnasium as gym
import numpy as np

import ballenvs  # noqa: F401
from benchmarks.common import machine, pin_to_one_core, write_json

REFERENCE = "CartPole-v1"

#: name -> (factory, goal as a fraction of the reference's rate)
SINGLE_ENVS: dict[str, tuple[Callable[[], gym.Env], float | None]] = {
    REFERENCE: (lambda: gym.make("CartPole-v1"), None),
    "BallDuel-v0 pixels": (lambda: gym.make("BallDuel-v0", obs_type="pixels"), 0.3),
    "BallDuel-v0 state": (lambda: gym.make("BallDuel-v0", obs_type="state"), 0.6),
    "UAVGrid-v0 vector": (lambda: gym.make("UAVGrid-v0", obs_type="vector"), 0.5),
    "UAVGrid-v0 image": (lambda: gym.make("UAVGrid-v0", obs_type="image"), 0.2),
}


def steps_per_second(env: gym.Env, steps: int, seed: int = 0) -> float:
    actions = [env.action_space.sample() for _ in range(steps)]
    env.reset(seed=seed)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def run(steps: int, rounds: int) -> dict:
    envs = {name: factory() for name, (factory, _) in SINGLE_ENVS.items()}
    for env in envs.values():
        env.action_space.seed(0)
    best = {name: 0.0 for name in envs}
    for _ in range(rounds):
        for name, env in envs.items():
            best[name] = max(best[name], steps_per_second(env, steps))
    reference = best[REFERENCE]
    rows = [
        {"env": name, "steps_per_s": rate, "ratio": rate / reference, "goal": SINGLE_ENVS[name][1]}
        for name, rate in best.items()
    ]
    return {"benchmark": "env_throughput", "machine": machine(), "steps": steps, "rounds": rounds, "rows": rows}


def format_table(result: dict) -> str:
    lines = [f"| env | steps/s | x {REFERENCE} | goal |", "|---|---:|---:|---:|"]
    for row in result["rows"]:
        goal = "" if row["goal"] is None else f">= {row['goal']}x {'(met)' if row['ratio'] >= row['goal'] else '(MISSED)'}"
        lines.append(f"| {row['env']} | {row['steps_per_s']:,.0f} | {row['ratio']:.2f} | {goal} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="steps per env per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    pin_to_one_core()
    result = run(args.steps, args.rounds)
    print(f"env_throughput on {result['machine']}, {args.steps} random steps x {args.rounds} rounds (best)")
    print(format_table(result))
    print(f"wrote {write_json('env_throughput', result)}")
    return result


if __name__ == "__main__":
    main()
