"""RLlib's sampling on our envs: env steps/s with 1 and 2 env runners, each stepping its envs
through RLlib's own vectorisation (gymnasium's SyncVectorEnv over single envs) or through our
batched vector env (``gym_env_vectorize_mode="vector_entry_point"``), side by side in one process.

    python -m benchmarks.rllib_sampling [--env BallSumo-v0] [--env-kwargs obs_type=state]
                                        [--runners 1 2] [--envs 64] [--steps 20000] [--repeats 3]

Needs the rllib extra (``pip install "ballenvs[rllib]"``). Each env runner is a Ray actor that
samples with the default PPO module (the MLP, or for pictures the CNN of ``agents.rllib.network``);
the runners sample at once, and the rate is all their env steps over the wall-clock of the call,
after one warm-up call. The configurations take turns, ``--repeats`` times, and the median is
reported: on a shared machine a ratio measured in turns is what holds.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from typing import Any

from agents.common.configuration.config import parse_overrides
from agents.common.errors import UsageError
from agents.environments.envs import probe_spaces
from agents.environments.ids import check_env_id
from agents.rllib.network import DEFAULT_CONV_FILTERS, DEFAULT_HIDDEN
from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, row, write_json

#: The CPU each env runner asks Ray for: they sample in turns, never all at once.
CPU_SHARE = 0.1
MODES = {"RLlib's sync vectorisation": "sync", "our vector env": "vector_entry_point"}


def measure(
    env_id: str,
    env_kwargs: dict[str, Any],
    picture: bool,
    runners: list[int],
    envs: int,
    steps: int,
    repeats: int,
    shown: Measurements,
) -> list[dict]:
    """Env steps/s of every (runners, mode), the configurations in turn ``repeats`` times, each
    measurement shown as it comes."""
    if importlib.util.find_spec("ray") is None:
        raise UsageError('benchmarks.rllib_sampling needs Ray RLlib: pip install "ballenvs[rllib]"')
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    model = {"conv_filters": DEFAULT_CONV_FILTERS} if picture else {"fcnet_hiddens": DEFAULT_HIDDEN}
    started_ray = not ray.is_initialized()  # a Ray the caller started is theirs to shut down
    if started_ray:
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    algos = {}
    try:
        for count in runners:
            for label, mode in MODES.items():
                config = (
                    PPOConfig()
                    .environment(f"ballenvs:{env_id}", env_config=env_kwargs)
                    .env_runners(
                        num_env_runners=count,
                        num_envs_per_env_runner=envs,
                        gym_env_vectorize_mode=mode,
                        # Every configuration's actors are alive at once (they take turns): a share of
                        # a CPU each, so Ray places them all on a machine with fewer cores than actors.
                        num_cpus_per_env_runner=CPU_SHARE,
                    )
                    .rl_module(model_config=DefaultModelConfig(**model))
                )
                algos[count, label] = config.build_algo()
                shown.write(f"  built: {count} env runner(s), {label}")
        per_runner = steps // max(runners)
        rates: dict[tuple[int, str], list[float]] = {key: [] for key in algos}
        for algo in algos.values():  # warm-up: the actors' first calls build and trace
            sample(algo, per_runner // 10 + envs)
        for turn in range(1, repeats + 1):
            for key, algo in algos.items():
                start = time.perf_counter()
                sampled = sample(algo, per_runner)
                rates[key].append(sampled / (time.perf_counter() - start))
                rate = rates[key][-1]
                shown.result(f"  turn {turn}/{repeats}: {key[0]} env runner(s), {key[1]}: {rate:,.0f} env steps/s")
    finally:
        for algo in algos.values():
            algo.stop()
        if started_ray:
            ray.shutdown()
    return [
        {"runners": count, "mode": label, "steps_per_s": statistics.median(values), "all": values}
        for (count, label), values in rates.items()
    ]


def sample(algo: Any, steps: int) -> int:
    """Every env runner samples ``steps`` env steps at once; the env steps they played."""
    episodes = algo.env_runner_group.foreach_env_runner(
        lambda runner: sum(len(episode) for episode in runner.sample(num_timesteps=steps, random_actions=False)),
        local_env_runner=False,
    )
    return int(sum(episodes))


def main(argv: list[str] | None = None) -> list[dict]:
    parser = Parser(prog="python -m benchmarks.rllib_sampling", description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="BallSumo-v0", help="env id (default: BallSumo-v0)")
    parser.add_argument("--env-kwargs", nargs="*", default=["obs_type=state"], help="env options (default: obs_type=state)")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="env runners (default: 1 2)")
    parser.add_argument("--envs", type=int, default=64, help="envs each runner steps (default: 64)")
    parser.add_argument(
        "--steps", type=int, default=20_000, help="env steps a call samples, over its runners (default: 20000)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="turns of every configuration (default: 3)")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [("--runners", args.runners, (1, 256)), ("--envs", args.envs, (1, 4096)), ("--steps", args.steps, (1, 10**8))]
        + [("--repeats", args.repeats, (1, 100))]
    )
    check_env_id(args.env)
    env_kwargs = parse_overrides(args.env_kwargs, "--env-kwargs")
    observation_space = probe_spaces(args.env, env_kwargs, None)[0]  # bad options: one line, before Ray starts
    picture = len(observation_space.shape or ()) == 3
    with Measurements(len(args.runners) * len(MODES) * args.repeats, not args.no_progress) as shown:
        results = measure(args.env, env_kwargs, picture, args.runners, args.envs, args.steps, args.repeats, shown)
    print(row("env runners", "vectorisation", f"env steps/s (median of {args.repeats})", "x RLlib's sync, same runners"))
    print(row(*["---"] * 4))
    for result in results:
        sync = next(r for r in results if r["runners"] == result["runners"] and r["mode"] == next(iter(MODES)))
        print(
            row(
                result["runners"],
                result["mode"],
                f"{result['steps_per_s']:,.0f}",
                f"{result['steps_per_s'] / sync['steps_per_s']:.2f}",
            )
        )
    write_json(
        "rllib_sampling",
        {"machine": machine(), "env": args.env, "env_kwargs": env_kwargs, "envs": args.envs, "results": results},
    )
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main))
