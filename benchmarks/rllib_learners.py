"""RLlib's learners on a two-node Ray cluster of this machine: time per iteration and env steps/s of
``--algo rllib_ppo`` with 1 and 2 learners (Ray actors training data-parallel) and 1 to 4 env
runners, at the same batch for a given number of runners.

    python -m benchmarks.rllib_learners [--env BallSumo-v0] [--runners 1 2 4] [--learners 1 2]
                                        [--iterations 4] [--n-steps 256]

Needs the rllib extra. The cluster is docs/rllib.md's, on one machine: a head with no CPUs of its
own (the trainer runs there) and a second node holding as many logical CPUs as the most runners
plus the most learners ask, joined with the cluster's token. Each configuration is one run of the
trainer through ``--address``, in turn; an iteration's time, and its split into the env runners'
sampling and the learners' update, are RLlib's own figures from the run's progress.csv, the first
iteration (actors warming up) left out, the median of the rest. On a machine with fewer cores
than actors the actors share them: the figures say what this machine gives, and the split says
which part of an iteration more learners can shorten.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.common.configuration.config_files import load_section
from agents.common.configuration.registry import ALGORITHMS
from agents.common.errors import UsageError
from agents.environments.ids import check_env_id
from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, row, write_json

JOIN_WAIT_S = 120.0


@contextmanager
def two_nodes(cpus: int) -> Iterator[tuple[str, dict[str, str]]]:
    """A head with no CPUs and a node with ``cpus``, token auth as docs/rllib.md sets it up; the
    head's address and the environment that reaches it. Both stopped whatever happens."""
    folder = Path(tempfile.mkdtemp(prefix="ballenvs-cluster-"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(folder),  # the token goes to this ~/.ray, not the user's
        RAY_AUTH_MODE="token",
    )
    subprocess.run(["ray", "get-auth-token", "--generate"], env=env, capture_output=True, check=True, timeout=60)
    common = ["--node-ip-address", "127.0.0.1", "--block", "--disable-usage-stats"]
    starts = [
        ["ray", "start", "--head", "--port", str(port), "--num-cpus", "0", "--include-dashboard", "false", *common],
        ["ray", "start", "--address", address, "--num-cpus", str(cpus), *common],
    ]
    nodes: list[subprocess.Popen] = []
    try:
        for argv in starts:
            log = open(folder / f"node_{len(nodes)}.log", "w")
            nodes.append(subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            deadline = time.monotonic() + JOIN_WAIT_S
            while cluster_cpus(env, address) != (0 if len(nodes) == 1 else cpus):
                if nodes[-1].poll() is not None or time.monotonic() > deadline:
                    log_text = (folder / f"node_{len(nodes) - 1}.log").read_text()
                    raise RuntimeError(f"a Ray node did not start: {log_text[-2000:]}")
                time.sleep(2)
        yield address, env
    finally:
        stop_nodes(nodes, port)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cluster_cpus(env: dict[str, str], address: str) -> float:
    """The CPUs the cluster at ``address`` holds now (-1: nothing answers there yet)."""
    code = f"import ray; ray.init(address={address!r}, logging_level='ERROR'); print(ray.cluster_resources().get('CPU', 0))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    return float(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else -1.0


def stop_nodes(nodes: list[subprocess.Popen], port: int) -> None:
    """Stop the nodes (``ray start --block`` in sessions of their own), the last started first: each
    command stops its node, and what is left of it is killed; then the address the head left in
    /tmp/ray for a later ``ray.init()`` to find goes, as ``ray stop`` would take it."""
    for node in reversed(nodes):
        node.terminate()
        try:
            node.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(node.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        node.wait(timeout=30)
    current = Path("/tmp/ray/ray_current_cluster")
    if current.is_file() and current.read_text().strip().endswith(f":{port}"):
        current.unlink()


def train_once(
    address: str, env: dict[str, str], env_id: str, runners: int, learners: int, n_steps: int, iterations: int, log_dir: Path
) -> dict[str, Any]:
    """One run of the trainer on the cluster: its iterations' median times (the first left out)."""
    n_envs = 8
    batch = n_steps * n_envs * runners
    keys = [f"env_runners={runners}", f"learners={learners}", f"n_steps={n_steps}", "batch_size=256", "n_epochs=10"]
    argv = ["--algo", "rllib_ppo", "--env", env_id, "--address", address, "--n-envs", str(n_envs)]
    argv += ["--timesteps", str(batch * iterations), "--eval-freq", "0", "--save-freq", "0", "--no-progress"]
    argv += ["--threads", "1", "--log-dir", str(log_dir), "--hyperparams", *keys]
    done = subprocess.run(
        [sys.executable, "-m", "agents.train", *argv], env={**env, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"the trainer failed ({runners} runners, {learners} learners): {done.stderr[-2000:]}")
    placed = re.findall(r"^\d+ (?:env runner|learner)\(s\): .*$", done.stderr, re.M)
    run = max((log_dir / "rllib_ppo").iterdir(), key=lambda folder: folder.stat().st_mtime)
    with open(run / "progress.csv") as file:
        rows = list(csv.DictReader(file))[1:]
    median = {
        name: statistics.median(float(r[f"time/{name}"]) for r in rows if r.get(f"time/{name}"))
        for name in ("iteration_s", "sample_s", "learn_s")
    }
    return {
        "runners": runners,
        "learners": learners,
        "batch": batch,
        "iterations": len(rows),
        **median,
        "steps_per_s": batch / median["iteration_s"],
        "placed": placed,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = Parser(prog="python -m benchmarks.rllib_learners", description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="BallSumo-v0", help="env id, its rllib_ppo section (default: BallSumo-v0)")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2, 4], help="env runners (default: 1 2 4)")
    parser.add_argument("--learners", type=int, nargs="+", default=[1, 2], help="learners (default: 1 2)")
    parser.add_argument("--iterations", type=int, default=4, help="iterations a run, the first left out (default: 4)")
    parser.add_argument("--n-steps", type=int, default=256, help="steps each of 8 envs plays per iteration (default: 256)")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [("--runners", args.runners, (1, 64)), ("--learners", args.learners, (1, 64))]
        + [("--iterations", args.iterations, (2, 1000)), ("--n-steps", args.n_steps, (32, 100_000))]
    )
    check_env_id(args.env)
    load_section(ALGORITHMS["rllib_ppo"].config_path(), args.env)  # one with no rllib_ppo section: one line, no cluster
    if importlib.util.find_spec("ray") is None:
        raise UsageError('benchmarks.rllib_learners needs Ray RLlib: pip install "ballenvs[rllib]"')
    configurations = [(runners, learners) for runners in args.runners for learners in args.learners]
    results = []
    with Measurements(len(configurations), not args.no_progress) as shown:
        with two_nodes(max(args.runners) + max(args.learners)) as (address, env):
            with tempfile.TemporaryDirectory(prefix="ballenvs-learners-") as log_dir:
                for runners, learners in configurations:
                    budget = (args.n_steps, args.iterations, Path(log_dir))
                    result = train_once(address, env, args.env, runners, learners, *budget)
                    results.append(result)
                    shown.result(
                        f"  {runners} runner(s), {learners} learner(s): {result['iteration_s']:.2f} s an iteration "
                        f"({result['sample_s']:.2f} sampling, {result['learn_s']:.2f} learning); {'; '.join(result['placed'])}"
                    )
    print(row("env runners", "learners", "batch", "s / iteration", "sampling s", "learning s", "env steps/s", "x 1 learner"))
    print(row(*["---"] * 8))
    for result in results:
        one = next((r for r in results if r["runners"] == result["runners"] and r["learners"] == 1), None)
        speedup = f"{one['iteration_s'] / result['iteration_s']:.2f}" if one else "-"
        times = (f"{result['iteration_s']:.2f}", f"{result['sample_s']:.2f}", f"{result['learn_s']:.2f}")
        rate = f"{result['steps_per_s']:,.0f}"
        print(row(result["runners"], result["learners"], f"{result['batch']:,}", *times, rate, speedup))
    write_json("rllib_learners", {"machine": machine(), "env": args.env, "n_steps": args.n_steps, "results": results})
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main))
