"""docs/rllib.md's cluster recipe, run as the page writes it, on two Ray nodes of this machine: the
head makes the cluster's token and starts with no CPUs of its own, a second node joins with the
token copied to it and two CPUs, and the run on the head trains with env runners that can only
land on the second node (each runner reports its node). Then the model plays. Each node is torn
down whatever happens. And deploy/'s Kubernetes files agree with the package and each other.
Runs where the rllib extra is installed (CI's oldest-gymnasium stage)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ray")

from agents.trainer.run import prepare  # noqa: E402  (after the skip: these tests need Ray)
from benchmarks.rllib_learners import cluster_cpus, free_port, stop_nodes  # noqa: E402
from tests.contracts.docs_examples import CLUSTER_TITLE, blocks  # noqa: E402
from tests.helpers import REPO  # noqa: E402

#: What the test adds to each `ray start` of the page: one machine's two nodes (Ray turns 127.0.0.1
#: into the machine's address, services.resolve_ip_for_localhost: the token keeps strangers out),
#: the head with no CPUs (so the env runners must go to the other node), no dashboard, and --block
#: so that stopping the command stops its node.
HEAD_EXTRA = ["--num-cpus", "0", "--node-ip-address", "127.0.0.1", "--include-dashboard", "false", "--block"]
NODE_EXTRA = ["--num-cpus", "2", "--node-ip-address", "127.0.0.1", "--block"]
#: The run's budget: one iteration of 2 runners x 8 envs x 64 steps, one epoch.
BUDGET = ["--timesteps", "1024", "--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]
SMALL = ["n_steps=64", "batch_size=256", "n_epochs=1"]


def recipe() -> list[tuple[str, list[str]]]:
    """The page's cluster block as (machine, commands): the comment lines name the machine."""
    (block,) = [b for b in blocks(REPO / "docs" / "rllib.md") if b.info.startswith(CLUSTER_TITLE)]
    machines: list[tuple[str, list[str]]] = []
    for line in block.code.splitlines():
        if line.startswith("# On the head"):
            machines.append(("head", []))
        elif line.startswith("# On every other machine"):
            machines.append(("node", []))
        elif line.strip():
            machines[-1][1].append(line)
    return machines


@pytest.mark.slow
def test_the_pages_cluster_recipe_trains_on_a_second_node_and_its_model_plays(tmp_path):
    port = free_port()
    address = f"127.0.0.1:{port}"
    base = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    base.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{base.get('PATH', '')}", OMP_NUM_THREADS="1")
    base["PYTHONPATH"] = str(REPO)
    nodes: list[subprocess.Popen] = []
    folders = {"head": tmp_path / "head", "node": tmp_path / "node"}
    envs = {}
    for machine, folder in folders.items():
        (folder / "home").mkdir(parents=True)
        envs[machine] = {**base, "HOME": str(folder / "home")}  # each machine's own ~/.ray
    trained = None
    try:
        for machine, lines in recipe():
            env, folder = envs[machine], folders[machine]
            for line in lines:
                line = line.replace("HEAD_IP:6379", address).replace("--port 6379", f"--port {port}")
                words = shlex.split(line, comments=True)
                if words[0] == "export":
                    for assignment in words[1:]:
                        key, value = assignment.split("=", 1)
                        env[key] = value
                elif words[:2] == ["ray", "start"]:
                    extra = HEAD_EXTRA if "--head" in words else NODE_EXTRA
                    if machine == "node":  # the token, copied from the head as the page says
                        (folder / "ray_token").write_bytes((folders["head"] / "ray_token").read_bytes())
                    log = open(folder / f"ray_start_{len(nodes)}.log", "w")
                    nodes.append(
                        subprocess.Popen(
                            [*words, *extra], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                        )
                    )
                    wanted = 2.0 if machine == "node" else 0.0
                    deadline = time.monotonic() + 120
                    while cluster_cpus(envs["head"], address) != wanted:
                        assert nodes[-1].poll() is None, (folder / f"ray_start_{len(nodes) - 1}.log").read_text()[-3000:]
                        assert time.monotonic() < deadline, f"the {machine} did not join within 120 s"
                        time.sleep(2)
                elif words[:3] == ["python", "-m", "agents.train"]:
                    argv = [*words[3:], *BUDGET, "--log-dir", str(tmp_path / "runs")]
                    argv[argv.index("--hyperparams") + 1 : argv.index("--hyperparams") + 1] = SMALL
                    trained = subprocess.run(
                        [sys.executable, "-m", "agents.train", *argv],
                        cwd=folder,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=600,
                    )
                else:  # ray get-auth-token, with the page's redirection
                    subprocess.run(["bash", "-c", line], cwd=folder, env=env, check=True, timeout=60)
        assert trained is not None, "the page's block has no run"
        assert trained.returncode == 0, trained.stderr[-4000:]
        assert re.search(r"^2 env runner\(s\): 0 on the trainer's Ray node, 2 on 1 other node\(s\)$", trained.stderr, re.M)
        assert "InvalidAuthToken" not in trained.stderr
    finally:
        stop_nodes(nodes, port)
    run = next((tmp_path / "runs" / "rllib_ppo").iterdir())
    played = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", str(run), "--opponent", "chaser", "--episodes", "2", "--no-progress"],
        env=base,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert played.returncode == 0, played.stderr[-3000:]
    assert "BallSumo-v0: 2 episodes" in played.stdout


def test_the_kuberay_job_runs_the_dockerfiles_image_on_the_declared_ray_and_a_command_the_trainer_takes(tmp_path):
    job = yaml.safe_load((REPO / "deploy" / "rayjob.yaml").read_text())
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    cluster = job["spec"]["rayClusterSpec"]
    base = re.search(r"^FROM rayproject/ray:(\S+)-py(\d)(\d+)-cpu$", (REPO / "deploy" / "Dockerfile").read_text(), re.M)
    assert base, "the Dockerfile builds on one of Ray's own CPU images"
    declared = re.search(r'"ray\[rllib\]>=([\d.]+)', (REPO / "pyproject.toml").read_text())
    assert declared and base[1].startswith(declared[1]) and cluster["rayVersion"] == base[1]
    assert f"{base[2]}.{base[3]}" == f"{sys.version_info.major}.{sys.version_info.minor}", "the Python CI tests on"
    tag = re.search(r"docker build -t (\S+) -f deploy/Dockerfile \.", (REPO / "deploy" / "Dockerfile").read_text())
    groups = [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]
    assert tag and {c["image"] for g in groups for c in g["template"]["spec"]["containers"]} == {tag[1]}
    words = shlex.split(job["spec"]["entrypoint"])
    assert words[:3] == ["python", "-m", "agents.train"]
    argv = words[3:]
    argv[argv.index("--log-dir") + 1] = str(tmp_path)
    args, setup, _ = prepare(argv, make_folder=False)
    assert (args.algo, args.address) == ("rllib_ppo", "auto")
    assert cluster["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0", "the head trains; runners go to the workers"
    runners = int(setup.section.algo_kwargs["env_runners"]) + int(setup.section.algo_kwargs.get("learners", 0))
    worker_cpus = sum(int(g["rayStartParams"]["num-cpus"]) * int(g["replicas"]) for g in cluster["workerGroupSpecs"])
    assert 0 < runners <= worker_cpus, "every env runner and learner holds a worker's CPU"
