"""Training throughput: our custom DQN against stable-baselines3's DQN, side by side, and PQN.

    python -m benchmarks.train_throughput [--steps 4000] [--rounds 2] [--envs BallDuel-v0 UAVGrid-v0]
        [--vec-envs dummy native subproc] [--device auto] [--plain-targets] [--peers]

Both DQNs learn from the same zoo_configs/dqn.yml section (hyperparameters, n_envs, frame
stacking), on the same device, with the same vector env. Each first runs past
``learning_starts`` untimed, then trains ``--steps`` more env steps timed: that is the rate
while learning. Rounds alternate the trainers so a noisy neighbour slows all alike; the best
round of each counts. Each vector env kind (in-process DummyVecEnv, worker-process
SubprocVecEnv, our batched native one) is measured for both DQNs. PQN runs its own
zoo_configs/pqn.yml section (its many envs are the point) on the native env, after one
untimed rollout, in the same rounds. Our DQN computes Double-DQN targets (one forward pass
more per update than SB3's DQN); ``--plain-targets`` times it with SB3's targets
(``double_q=False``), the same arithmetic on both sides. Each rate is printed beside its floor
(:mod:`benchmarks.floor`: the section's network arithmetic alone, in pure torch, on the same
device and threads) as a fraction of it. ``--peers`` adds sbx's DQN (:mod:`benchmarks.peers`) on
the same section and vector env in the same rounds, where sbx is installed and has the section's
policy; its floor (JAX's arithmetic) is not computed, and the keys it lacks are named.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.algorithms import pqn
from agents.algorithms.dqn import DQNAgent, learn, replay_buffer, settings
from agents.common.errors import note
from agents.environments.envs import VEC_ENVS, make_vec
from agents.environments.ids import check_env_id
from agents.environments.steps import make_steps
from agents.sb3.sb3_dqn import build_dqn
from agents.session.cli import Parser, add_device_flags, resolve_device, run_cli
from agents.session.hooks import Hooks
from agents.session.progress import Progress
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, row, write_json
from benchmarks.floor import dqn_floor, pqn_floor, section_of, whole_rollouts
from benchmarks.peers import SBX_POLICIES, sbx_available, sbx_rate

WARMUP_AFTER_LEARNING_STARTS = 500  # a few updates before timing, so lazy set-up is not timed
MAX_STEPS = 10_000_000  # a timed round of this many steps already takes hours


def _env(section: Any, vec_env: str, seed: int, make: Callable[..., Any] = make_vec) -> Any:
    return make(section.env_id, section.env_kwargs, section.n_envs, seed, vec_env, section.frame_stack)


def sb3_rate(
    env_id: str, steps: int, vec_env: str, overrides: dict[str, Any], seed: int = 0, device: str = "cpu"
) -> dict[str, float]:
    section = section_of(env_id, "dqn", overrides)
    env = _env(section, vec_env, seed)
    model = build_dqn(section, env, seed, device)
    model.learn(section.algo_kwargs["learning_starts"] + WARMUP_AFTER_LEARNING_STARTS)
    before, start = model.num_timesteps, time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    returns = [ep["r"] for ep in model.ep_info_buffer or ()]
    env.close()
    return {
        "steps_per_s": (model.num_timesteps - before) / elapsed,
        "ep_return": float(np.mean(returns)) if returns else float("nan"),
    }


class _Returns(Hooks):
    def __init__(self) -> None:
        self.last = float("nan")

    def on_episodes(self, progress, returns, lengths, loss, fps) -> None:
        self.last = float(np.mean(returns))


def custom_rate(
    env_id: str,
    steps: int,
    vec_env: str,
    overrides: dict[str, Any],
    seed: int = 0,
    device: str = "cpu",
    amp: bool = False,
    compile: bool = False,
) -> dict[str, float]:
    section = section_of(env_id, "custom", overrides)
    env = _env(section, vec_env, seed, make_steps)  # as custom_train makes them
    config, spec = settings(section, env.observation_space, env.action_space)
    agent = DQNAgent(spec, config, device, seed=seed, amp=amp, compile=compile)
    buffer = replay_buffer(config, env.observation_space, device, seed=seed)
    warmup = config.learning_starts + WARMUP_AFTER_LEARNING_STARTS
    # One schedule over warm-up and timed steps, as a single SB3 learn() call would have.
    progress = Progress(exploration_horizon=warmup + steps)
    hooks = _Returns()
    learn(agent, env, progress, warmup, hooks, buffer)
    start = time.perf_counter()
    learn(agent, env, progress, steps, hooks, buffer)
    elapsed = time.perf_counter() - start
    env.close()
    return {"steps_per_s": steps / elapsed, "ep_return": hooks.last}


def pqn_rate(
    env_id: str, steps: int, seed: int = 0, device: str = "cpu", amp: bool = False, compile: bool = False
) -> dict[str, float]:
    """PQN on its own config section's envs (native), after one untimed rollout; at least one timed rollout."""
    section = section_of(env_id, "pqn", {})
    env = make_steps(section.env_id, section.env_kwargs, section.n_envs, seed, "native", section.frame_stack, stagger=True)
    config, spec = pqn.settings(section, env.observation_space, env.action_space)
    agent = pqn.PQNAgent(spec, config, device, seed=seed, amp=amp, compile=compile)
    rollout, timed = config.rollout_steps * section.n_envs, whole_rollouts(config, section.n_envs, steps)
    progress = Progress(exploration_horizon=rollout + timed)
    hooks = _Returns()
    pqn.learn(agent, env, progress, rollout, hooks)
    start = time.perf_counter()
    pqn.learn(agent, env, progress, timed, hooks)
    elapsed = time.perf_counter() - start
    env.close()
    return {"steps_per_s": timed / elapsed, "ep_return": hooks.last, "n_envs": section.n_envs}


def _floors(
    env_id: str, steps: int, overrides: dict[str, Any], custom_overrides: dict[str, Any], device: str
) -> dict[str, float]:
    """Each trainer's floor, timed over as many env steps as its round."""
    return {
        "sb3": dqn_floor(section_of(env_id, "dqn", overrides), device, double_q=False, env_steps=steps).steps_per_s,
        "custom": dqn_floor(section_of(env_id, "custom", custom_overrides), device, env_steps=steps).steps_per_s,
        "pqn": pqn_floor(section_of(env_id, "pqn"), device, env_steps=steps).steps_per_s,
    }


def run(
    envs: list[str],
    steps: int,
    rounds: int,
    vec_envs: list[str],
    overrides: dict[str, Any],
    device: str,
    custom_overrides: dict[str, Any] | None = None,
    peers: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> dict:
    """``on_row``: called with each env and vec env's row as it is measured (progress)."""
    custom_overrides = {**overrides, **(custom_overrides or {})}
    rows = []
    for env_id in envs:
        sbx_runs = peers and section_of(env_id, "dqn", overrides).policy in SBX_POLICIES
        for vec_env in vec_envs:
            best: dict[str, dict[str, Any]] = {}
            floors: dict[str, float] = {}
            names: tuple[str, ...] = ("sb3", "custom", "pqn") if vec_env == "native" else ("sb3", "custom")
            names += ("sbx",) if sbx_runs else ()
            for _ in range(rounds):
                # Each trainer's floor (its section's arithmetic alone, benchmarks.floor, same device and
                # threads), timed over as many env steps as the trainer's round, in every round beside
                # the trainers, and taken at its best as they are: a floor timed once, in pieces of a
                # few milliseconds, moved 2x between runs on a shared machine.
                for name, floor in _floors(env_id, steps, overrides, custom_overrides, device).items():
                    floors[name] = max(floors.get(name, 0.0), floor)
                for name in names:
                    if name == "sb3":
                        result = sb3_rate(env_id, steps, vec_env, overrides, device=device)
                    elif name == "sbx":
                        result = sbx_rate(section_of(env_id, "dqn", overrides), steps, vec_env)
                    elif name == "custom":
                        result = custom_rate(env_id, steps, vec_env, custom_overrides, device=device)
                    else:
                        result = pqn_rate(env_id, steps, device=device)
                    if name not in best or result["steps_per_s"] > best[name]["steps_per_s"]:
                        best[name] = result
            ratio = best["custom"]["steps_per_s"] / best["sb3"]["steps_per_s"]
            rates = {f"{k}_{m}": v[m] for k, v in best.items() for m in v}
            of_floor = {f"{k}_of_floor": v["steps_per_s"] / floors[k] for k, v in best.items() if k in floors}
            floor_rates = {f"{k}_floor": floors[k] for k in best if k in floors}
            rows.append({"env": env_id, "vec_env": vec_env, **rates, **floor_rates, **of_floor, "ratio": ratio})
            if on_row is not None:
                on_row(rows[-1])
    return {
        "benchmark": "train_throughput",
        "machine": machine(),
        "device": device,
        "steps": steps,
        "rounds": rounds,
        "overrides": overrides,
        "custom_overrides": custom_overrides,
        "peers": peers,
        "rows": rows,
    }


def _of_floor(r: dict, name: str) -> str:
    """A trainer's rate with its fraction of its floor: "1,234 (0.81 of 1,523)"."""
    return f"{r[f'{name}_steps_per_s']:,.0f} ({r[f'{name}_of_floor']:.2f} of {r[f'{name}_floor']:,.0f})"


def format_table(result: dict) -> str:
    header: tuple[str, ...] = (
        "env",
        "vec env",
        "SB3 DQN steps/s (of its floor)",
        "custom steps/s (of its floor)",
        "custom / SB3",
        "PQN steps/s (of its floor; its envs)",
    )
    peers = result.get("peers", False)
    header += ("sbx DQN steps/s (lacks)", "custom / sbx") if peers else ()
    lines = [row(*header), "|---|---|---:|---:|---:|---:|" + ("---:|---:|" if peers else "")]
    for r in result["rows"]:
        cells = (_of_floor(r, "sb3"), _of_floor(r, "custom"), f"{r['ratio']:.2f}")
        pqn_cell = f"{_of_floor(r, 'pqn')}; {r['pqn_n_envs']:.0f}" if "pqn_steps_per_s" in r else ""
        peer_cells: tuple[str, ...] = ()
        if peers and "sbx_steps_per_s" in r:
            lacks = ", ".join(r["sbx_lacking"]) or "nothing"
            ratio = r["custom_steps_per_s"] / r["sbx_steps_per_s"]
            peer_cells = (f"{r['sbx_steps_per_s']:,.0f} ({lacks})", f"{ratio:.2f}")
        elif peers:
            peer_cells = ("its DQN has no policy for this observation", "")
        lines.append(row(r["env"], r["vec_env"], *cells, pqn_cell, *peer_cells))
    return "\n".join(lines)


format_result = format_table  # what python -m benchmarks writes into RESULTS.md


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(prog="python -m benchmarks.train_throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=["BallDuel-v0", "UAVGrid-v0"])
    parser.add_argument("--steps", type=int, default=4000, help="timed env steps per trainer per round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--vec-envs", nargs="+", default=["dummy", "native", "subproc"], choices=VEC_ENVS)
    parser.add_argument(
        "--learning-starts", type=int, default=1000, help="the same for both DQNs (the configs' is long for a benchmark)"
    )
    add_device_flags(parser)
    parser.add_argument(
        "--plain-targets", action="store_true", help="our DQN with SB3's targets (double_q=False): equal arithmetic"
    )
    parser.add_argument("--peers", action="store_true", help="sbx's DQN beside them (pip install -e '.[peers]')")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [
            ("--steps", args.steps, (1, MAX_STEPS)),
            ("--rounds", args.rounds, (1, 100)),
            ("--learning-starts", args.learning_starts, (0, MAX_STEPS)),
        ]
    )
    for env_id in args.envs:
        check_env_id(env_id)
    overrides = {"learning_starts": args.learning_starts}
    custom = {"double_q": False} if args.plain_targets else {}
    device, _ = resolve_device(args.device, args.threads)
    peers = args.peers and sbx_available()
    if args.peers and not peers:
        note("--peers: sbx is not installed (pip install -e '.[peers]'); its DQN is skipped")
    with Measurements(len(args.envs) * len(args.vec_envs), not args.no_progress) as shown:

        def measured(r: dict[str, Any]) -> None:
            shown.result(f"{r['env']}, {r['vec_env']}: our DQN / SB3's {r['ratio']:.2f}")

        result = run(args.envs, args.steps, args.rounds, args.vec_envs, overrides, device, custom, peers, on_row=measured)
    print(f"train_throughput on {result['machine']} ({result['device']}): ", end="")
    print(f"{args.steps} env steps after learning starts, best of {args.rounds}")
    print(format_table(result))
    print(f"wrote {write_json('train_throughput', result)}")
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
