"""Our first user's DQN update, per sample, against one batched update of the custom agent.

    python -m benchmarks.naive_vs_batched [--calls 30] [--batch-size 32]

Their Keras agent (UAVGrid: UAV position + request array in, Dense 512-512-256, 9 Q-values
out, minibatch 32) trained like this, once per sample of the minibatch: predict the target
net's values of the next state, predict the online net's values of the state, fit one
sample. Reproduced in PyTorch with their network (their Keras calls cost 20 ms and 7 ms; ours
are far cheaper, so this understates their loss), it is timed against DQNAgent.update: one
Double-DQN update of the whole minibatch with the same network, loss and optimiser.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from agents.algorithms.buffer import ReplayBuffer
from agents.algorithms.dqn import DQNAgent
from agents.algorithms.networks import QNetwork, network_spec
from agents.common.configuration.hyperparameters import OurDQNConfig
from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, write_json

N_UES = 10
INPUTS = 2 + N_UES  # UAV position and the raw request types, as their network took them
NET_ARCH = [512, 512, 256]
GAMMA = 0.99


def user_network_spec() -> dict[str, Any]:
    return network_spec(spaces.Box(0.0, 3.0, (INPUTS,), np.float32), 9, "MlpPolicy", {"net_arch": NET_ARCH})


def naive_update(online: QNetwork, target: QNetwork, optimizer: torch.optim.Optimizer, batch: dict[str, np.ndarray]) -> None:
    """One train call of the user's agent: a predict, a predict and a fit per sample."""
    for i in range(len(batch["actions"])):
        state = torch.as_tensor(batch["obs"][i : i + 1])
        next_state = torch.as_tensor(batch["next_obs"][i : i + 1])
        with torch.no_grad():
            future = target(next_state).max().item()  # predict(next_state) on the target net
            values = online(state).clone()  # predict(state): the vector to fit towards
        values[0, int(batch["actions"][i])] = float(batch["rewards"][i]) + (0.0 if batch["terminated"][i] else GAMMA * future)
        loss = F.mse_loss(online(state), values)  # fit(state, values, epochs=1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run(calls: int, batch_size: int, seed: int = 0) -> dict[str, Any]:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    space = spaces.Box(0.0, 3.0, (INPUTS,), np.float32)
    size = 4096
    obs = rng.uniform(0, 3, (size, INPUTS)).astype(np.float32)
    next_obs = rng.uniform(0, 3, (size, INPUTS)).astype(np.float32)
    actions, rewards, terminated = (
        rng.integers(9, size=size),
        rng.normal(size=size).astype(np.float32),
        rng.random(size) < 0.01,
    )
    buffer = ReplayBuffer(size, space, seed=seed)
    buffer.add(obs, next_obs, actions, rewards, terminated)
    agent = DQNAgent(user_network_spec(), OurDQNConfig(batch_size=batch_size, gamma=GAMMA), "cpu", seed=seed)
    online, target = QNetwork(user_network_spec()), QNetwork(user_network_spec())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-4)

    def naive() -> None:
        idx = rng.integers(size, size=batch_size)
        naive_update(
            online,
            target,
            optimizer,
            {
                "obs": obs[idx],
                "next_obs": next_obs[idx],
                "actions": actions[idx],
                "rewards": rewards[idx],
                "terminated": terminated[idx],
            },
        )

    def batched() -> None:
        agent.update(buffer.sample(batch_size))

    for call in (naive, batched):
        call()  # warm-up
    # Alternate the two so both see the same machine load.
    totals = {"naive": 0.0, "batched": 0.0}
    for _ in range(calls):
        for name, call in (("naive", naive), ("batched", batched)):
            start = time.perf_counter()
            call()
            totals[name] += time.perf_counter() - start
    timings = {name: total / calls for name, total in totals.items()}
    return {
        "benchmark": "naive_vs_batched",
        "machine": machine(),
        "torch_threads": torch.get_num_threads(),
        "calls": calls,
        "batch_size": batch_size,
        "ms_per_train_call": {name: t * 1e3 for name, t in timings.items()},
        "ratio": timings["naive"] / timings["batched"],
    }


def format_table(result: dict) -> str:
    ms, ratio = result["ms_per_train_call"], result["ratio"]
    return "\n".join(
        [
            "| update of a 32-sample minibatch | ms per train call |",
            "|---|---:|",
            f"| per sample: predict, predict, fit (the user's) | {ms['naive']:.2f} |",
            f"| one batched Double-DQN update (custom agent) | {ms['batched']:.2f} |",
            f"| **ratio** | **{ratio:.1f}x** (goal >= 20x: {'met' if ratio >= 20 else 'MISSED'}) |",
        ]
    )


format_result = format_table  # what python -m benchmarks writes into RESULTS.md


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30, help="timed train calls of each kind")
    parser.add_argument("--batch-size", type=int, default=32)
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--calls", args.calls, (1, 100_000)), ("--batch-size", args.batch_size, (1, 65_536))])
    with Measurements(1, not args.no_progress) as shown:
        result = run(args.calls, args.batch_size)
        threads = f"torch {torch.__version__}, {result['torch_threads']} threads"
        shown.write(f"naive_vs_batched on {result['machine']} ({threads}), {args.calls} calls each")
        shown.result(format_table(result))
    print(f"wrote {write_json('naive_vs_batched', result)}")
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
