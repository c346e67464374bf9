"""Where a vector step of our DQN's loop goes: each piece timed alone, and the loop with and without its updates.

    python -m benchmarks.loop_pieces [--env UAVGrid-v0] [--steps 8000] [--device auto] [--threads auto]

A section's floor (:mod:`benchmarks.floor`) is its network's acting and updates alone. The loop
adds the env's step, the replay buffer's add and sample, exploration and the bookkeeping. Their
time, over the time of acting and one update, bounds the fraction of the floor any loop with an
env and a replay buffer can reach: ``floor / (floor + rest)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from agents.algorithms.dqn import DQNAgent, gradient_steps_per_train, learn, replay_buffer, settings
from agents.environments.ids import check_env_id
from agents.environments.steps import make_steps
from agents.session.cli import Parser, add_device_flags, resolve_device, run_cli
from agents.session.hooks import Hooks
from agents.session.progress import Progress
from benchmarks.common import Measurements, check_ranges, machine, progress_flag
from benchmarks.floor import section_of


def best_ms(piece: Callable[[], Any], calls: int = 300, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            piece()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e3


def pieces(env_id: str, steps: int, device: str) -> dict[str, float]:
    """Milliseconds a vector step: each piece alone, the loop, and the loop with updates skipped."""
    section = section_of(env_id, "custom", {"double_q": False})  # the floor's and SB3's targets
    env = make_steps(section.env_id, section.env_kwargs, section.n_envs, 0, "native", section.frame_stack)
    config, spec = settings(section, env.observation_space, env.action_space)
    agent = DQNAgent(spec, config, device, seed=0)
    buffer = replay_buffer(config, env.observation_space, device, seed=0)
    progress = Progress(exploration_horizon=config.learning_starts + 3 * steps)
    learn(agent, env, progress, config.learning_starts + section.n_envs * 50, Hooks(), buffer)  # past learning_starts
    observation, actions = env.reset(), agent.random_actions(section.n_envs)
    step = env.step(actions)
    batch = buffer.sample(config.batch_size)
    result = {
        "act": best_ms(lambda: agent.act(observation, 0.05)),
        "env step": best_ms(lambda: env.step(actions)),
        "buffer add": best_ms(
            lambda: buffer.add(observation, step.next_observations, actions, step.rewards, step.terminated, step.ended)
        ),
        "buffer sample": best_ms(lambda: buffer.sample(config.batch_size)),
        "update (one fixed batch)": best_ms(lambda: agent.update(batch)),
    }
    vector_steps = -(-steps // section.n_envs)  # learn() runs whole vector steps until it has ``steps``
    start = time.perf_counter()
    learn(agent, env, progress, steps, Hooks(), buffer)
    result["the loop"] = (time.perf_counter() - start) / vector_steps * 1e3
    agent.update = lambda batch: None  # type: ignore[method-assign, assignment, return-value]  # the loop's bookkeeping alone
    start = time.perf_counter()
    learn(agent, env, progress, steps, Hooks(), buffer)
    result["the loop, updates skipped"] = (time.perf_counter() - start) / vector_steps * 1e3
    env.close()
    updates_per_step = gradient_steps_per_train(config, section.n_envs) / config.train_freq
    floor = result["act"] + updates_per_step * result["update (one fixed batch)"]
    rest = result["the loop, updates skipped"] - result["act"]
    result["bound (floor / (floor + rest))"] = floor / (floor + rest)
    result["the loop's fraction (floor / the loop)"] = floor / result["the loop"]
    return result


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="UAVGrid-v0")
    parser.add_argument("--steps", type=int, default=8000, help="env steps of each timed loop")
    add_device_flags(parser)
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_env_id(args.env)
    check_ranges([("--steps", args.steps, (1, 10_000_000))])
    device, _ = resolve_device(args.device, args.threads)
    with Measurements(1, not args.no_progress) as shown:
        result = pieces(args.env, args.steps, device)
        shown.write(f"{machine()}; {args.env}, our DQN's section, plain targets, {device}")
        shown.result("\n".join(f"| {name} | {value:.3f} |" for name, value in result.items()))
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
