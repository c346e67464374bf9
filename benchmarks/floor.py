"""The floor of a config section: its own arithmetic alone, in pure PyTorch, as env steps per second.

    python -m benchmarks.floor [--envs BallDuel-v0 UAVGrid-v0] [--device auto] [--threads auto]
                               [--config zoo_configs/selfplay_pixels.yml]

A trainer can go no faster than the arithmetic its section asks for: the Q-network's forward
pass acting for all envs at once, and its updates at the section's batch size and replay ratio.
This measures exactly that and nothing else (no env, no replay buffer, no logging), on the
same device and threads, with the network the trainers build from the section's
``policy_kwargs``:

- DQN (``zoo_configs/dqn.yml``): per vector step one forward pass for ``n_envs`` observations;
  every ``train_freq`` vector steps ``gradient_steps`` updates of ``batch_size``: the target
  network's forward pass on the next observations (and the online one's, for Double-DQN
  targets), the online forward and backward pass, gradient clipping and a fused Adam step.
- PQN (``zoo_configs/pqn.yml``): per rollout of ``rollout_steps`` vector steps, ``rollout_steps + 1``
  forward passes for ``n_envs`` observations, then ``n_epochs x n_minibatches`` updates.

``benchmarks.train_throughput`` prints each trainer's rate as a fraction of its floor. Each row
also prints the network's multiply-adds a sample (its convolutions and dense layers), and the
samples its updates learn from per env step (``batch_size x gradient_steps / (train_freq x
n_envs)``): the two figures that set a section's cost. ``--config`` adds another file's sections
(our custom DQN on them), e.g. the pixel self-play section beside the state one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.algorithms.dqn import gradient_steps_per_train
from agents.algorithms.networks import QNetwork, settings_of
from agents.algorithms.pqn import settings as pqn_settings
from agents.common.configuration.config import Section, build_section
from agents.common.configuration.config_files import load_section, shipped_config
from agents.common.configuration.hyperparameters import OurDQNConfig, PQNConfig
from agents.common.configuration.registry import ALGORITHMS
from agents.common.networks.lean_cnn import multiply_adds
from agents.common.readers import read_yaml
from agents.environments.envs import probe_spaces
from agents.environments.ids import check_env_id
from agents.session.cli import Parser, add_device_flags, describe_device, resolve_device, run_cli
from benchmarks.common import Measurements, machine, progress_flag, row, write_json

REPEATS = 7  # timed repetitions of each piece; the median counts


@dataclass
class Floor:
    """A section's arithmetic: the env steps per second it allows, and its pieces' median seconds
    (None when the rate was timed as one loop, which does not time the pieces)."""

    steps_per_s: float
    act_s: float | None = None  # one forward pass acting for all envs
    update_s: float | None = None  # one update of a batch (DQN) or minibatch (PQN)
    multiply_adds: int = 0  # of the network's forward pass, a sample
    samples_per_step: float = 0.0  # transitions its updates learn from per env step


def section_of(env_id: str, algo: str, overrides: dict[str, Any] | None = None, config: str | None = None) -> Section:
    """``env_id``'s section of ``config`` (default: the algorithm's shipped file) for ``algo``."""
    algorithm = ALGORITHMS[algo]
    raw = load_section(config or shipped_config(algorithm.config), env_id)
    section = build_section(env_id, raw, overrides or {}, algorithm.schema)
    if section.env_kwargs.get("opponent") == "self":  # a self-play section: its pool is the trainers', not the env's
        section.env_kwargs.pop("opponent")
    return section


def _batch(space: Any, n: int, device: torch.device) -> Any:
    """``n`` observations of ``space`` as tensors on ``device`` (a dict for a Dict space)."""
    if hasattr(space, "spaces"):
        return {key: _batch(part, n, device) for key, part in space.spaces.items()}
    return torch.as_tensor(np.stack([space.sample() for _ in range(n)]), device=device)


def _median_seconds(piece: Callable[[], Any], device: torch.device, repeats: int = REPEATS) -> float:
    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(3):  # warm up: allocations, cuDNN's choice of kernels
        piece()
    synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(5):
            piece()
        synchronize()
        times.append((time.perf_counter() - start) / 5)
    return sorted(times)[len(times) // 2]


def _run_rate(vector_step: Callable[[int], None], env_steps: int, n_envs: int, device: torch.device) -> float:
    """Env steps per second of ``vector_step(k)`` run for ``env_steps`` env steps in one timed loop:
    over as long as a trainer's timed round, so that both meet the same load on a shared machine."""
    count = max(env_steps // n_envs, 1)
    start = time.perf_counter()
    for k in range(count):
        vector_step(k)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return count * n_envs / (time.perf_counter() - start)


def _network_and_update(
    spec: dict[str, Any], observation_space: Any, batch_size: int, device: torch.device, double_q: bool, gamma: float
) -> tuple[QNetwork, Callable[[], None]]:
    """The online network, and one update of ``batch_size`` in pure torch (the target network's
    values, the online network's loss, its backward pass, clipping and fused Adam)."""
    online, target = QNetwork(spec).to(device), QNetwork(spec).to(device)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-4, fused=True)
    parameters = list(online.parameters())
    observations, next_observations = (
        _batch(observation_space, batch_size, device),
        _batch(observation_space, batch_size, device),
    )
    actions = torch.randint(spec["n_actions"], (batch_size,), device=device)
    rewards, terminated = torch.randn(batch_size, device=device), torch.zeros(batch_size, device=device)

    def update() -> None:
        with torch.no_grad():
            next_q = target(next_observations)
            if double_q:
                next_values = next_q.gather(1, online(next_observations).argmax(1, keepdim=True)).squeeze(1)
            else:
                next_values = next_q.max(1).values
            targets = rewards + gamma * (1.0 - terminated) * next_values
        loss = F.smooth_l1_loss(online(observations).gather(1, actions.unsqueeze(1)).squeeze(1), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 10.0)
        optimizer.step()

    return online, update


def _acting(network: QNetwork, observation_space: Any, n_envs: int, device: torch.device) -> Callable[[], Any]:
    observations = _batch(observation_space, n_envs, device)

    def act() -> Any:
        with torch.inference_mode():
            return network(observations).argmax(1).cpu()  # the actions go back to the host, as a trainer's do

    return act


def dqn_floor(section: Section, device: str, double_q: bool | None = None, env_steps: int | None = None) -> Floor:
    """The DQN section's floor; ``double_q``: with Double-DQN targets (None: as the section says,
    our DQN's default; SB3's DQN has plain targets). ``env_steps``: its rate timed over that many
    env steps in one loop, as a trainer's is (else from its pieces' medians)."""
    observation_space, action_space = probe_spaces(section.env_id, section.env_kwargs, section.frame_stack)
    config, spec = settings_of(OurDQNConfig, section, observation_space, action_space)
    double_q = config.double_q if double_q is None else double_q
    torch_device = torch.device(device)
    network, update = _network_and_update(spec, observation_space, config.batch_size, torch_device, double_q, config.gamma)
    act = _acting(network, observation_space, section.n_envs, torch_device)
    updates = gradient_steps_per_train(config, section.n_envs)  # every train_freq vector steps
    cost: dict[str, Any] = {
        "multiply_adds": multiply_adds(network, _batch(observation_space, 2, torch_device)),
        "samples_per_step": config.batch_size * updates / (config.train_freq * section.n_envs),
    }
    if env_steps is None:
        act_s, update_s = _median_seconds(act, torch_device), _median_seconds(update, torch_device)
        per_vector_step = act_s + update_s * updates / config.train_freq
        return Floor(section.n_envs / per_vector_step, act_s, update_s, **cost)

    def vector_steps(k: int) -> None:  # what a trainer's loop computes, and nothing else
        act()
        if (k + 1) % config.train_freq == 0:
            for _ in range(updates):
                update()

    return Floor(_run_rate(vector_steps, env_steps, section.n_envs, torch_device), **cost)


def whole_rollouts(config: PQNConfig, n_envs: int, env_steps: int) -> int:
    """``env_steps`` rounded down to whole PQN rollouts of ``config``, at least one."""
    rollout = config.rollout_steps * n_envs
    return max(env_steps // rollout, 1) * rollout


def pqn_floor(section: Section, device: str, env_steps: int | None = None) -> Floor:
    """The PQN section's floor: a rollout's acting and its epochs of minibatch updates
    (``env_steps`` as for :func:`dqn_floor`, in whole rollouts: :func:`whole_rollouts`)."""
    observation_space, action_space = probe_spaces(section.env_id, section.env_kwargs, section.frame_stack)
    config, spec = pqn_settings(section, observation_space, action_space)
    assert isinstance(config, PQNConfig)
    torch_device = torch.device(device)
    minibatch = config.rollout_steps * section.n_envs // config.n_minibatches
    network = QNetwork(spec).to(torch_device)
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-4, fused=True)
    parameters = list(network.parameters())
    observations = _batch(observation_space, minibatch, torch_device)
    actions = torch.randint(spec["n_actions"], (minibatch,), device=torch_device)
    returns = torch.randn(minibatch, device=torch_device)

    def update() -> None:
        loss = F.mse_loss(network(observations).gather(1, actions.unsqueeze(1)).squeeze(1), returns)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 10.0)
        optimizer.step()

    act = _acting(network, observation_space, section.n_envs, torch_device)
    cost: dict[str, Any] = {
        "multiply_adds": multiply_adds(network, _batch(observation_space, 2, torch_device)),
        "samples_per_step": config.n_epochs * minibatch * config.n_minibatches / (config.rollout_steps * section.n_envs),
    }
    if env_steps is None:
        act_s, update_s = _median_seconds(act, torch_device), _median_seconds(update, torch_device)
        per_rollout = (config.rollout_steps + 1) * act_s + config.n_epochs * config.n_minibatches * update_s
        return Floor(config.rollout_steps * section.n_envs / per_rollout, act_s, update_s, **cost)

    def vector_steps(k: int) -> None:
        act()
        if (k + 1) % config.rollout_steps == 0:
            act()  # the bootstrap values after the rollout
            for _ in range(config.n_epochs * config.n_minibatches):
                update()

    timed = whole_rollouts(config, section.n_envs, env_steps)
    return Floor(_run_rate(vector_steps, timed, section.n_envs, torch_device), **cost)


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(prog="python -m benchmarks.floor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=["BallDuel-v0", "UAVGrid-v0"])
    parser.add_argument("--config", help="a config file whose sections of --envs are added, trained by our DQN")
    add_device_flags(parser)
    progress_flag(parser)
    args = parser.parse_args(argv)
    for env_id in args.envs:
        check_env_id(env_id)
    extra = {} if args.config is None else read_yaml(args.config, "config")
    if not isinstance(extra, dict):
        parser.error(f"--config {args.config!r} must map env ids to sections")
    device, threads = resolve_device(args.device, args.threads)
    rows = []
    with Measurements(3 * len(args.envs) + sum(env_id in extra for env_id in args.envs), not args.no_progress) as shown:
        shown.write(f"floor on {machine()} ({describe_device(device, threads)})")
        shown.write(
            row("section", "multiply-adds a sample", "samples per env step", "act (ms)", "update (ms)", "floor env steps/s")
        )
        shown.write("|---|---:|---:|---:|---:|---:|")
        for env_id in args.envs:
            sections: list[tuple[str, str, str | None]] = [("dqn", "dqn", None), ("dqn, double-q", "custom", None)]
            sections.append(("pqn", "pqn", None))
            if env_id in extra:
                sections.append((f"{Path(args.config).name}, double-q", "custom", args.config))
            for name, algo, config in sections:
                section = section_of(env_id, algo, config=config)
                floor = pqn_floor(section, device) if algo == "pqn" else dqn_floor(section, device, double_q=algo == "custom")
                rows.append({"env": env_id, "algo": name, **floor.__dict__})
                assert floor.act_s is not None and floor.update_s is not None  # timed in pieces
                shown.result(
                    row(
                        f"{env_id} {name}",
                        f"{floor.multiply_adds:,}",
                        f"{floor.samples_per_step:g}",
                        f"{floor.act_s * 1e3:.2f}",
                        f"{floor.update_s * 1e3:.2f}",
                        f"{floor.steps_per_s:,.0f}",
                    )
                )
    result = {"benchmark": "floor", "machine": machine(), "device": describe_device(device, threads), "rows": rows}
    write_json("floor", result)
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
