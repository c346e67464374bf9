"""Sharing the machine: how many threads torch gets (--threads), and that its idle threads sleep."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents.common import threads
from agents.common.errors import UsageError

#: Real processes, trainer runs and studies: the unit tier (-m "not slow") leaves them out.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("value", ["0", "-1", "two", "", "1.5"])
def test_a_bad_thread_count_is_refused_naming_it(value):
    with pytest.raises(UsageError, match=f"--threads must be 'auto' or a whole number in 1..1024, got {value!r}"):
        threads.parse_threads(value)


def test_a_thread_count_is_taken_as_given(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert threads.choose_threads("3") == (3, "--threads")


def test_auto_follows_omp_num_threads_when_set(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads.choose_threads("auto") == (1, "OMP_NUM_THREADS")


def test_auto_takes_the_cores_other_processes_leave_free(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    for busy, expected in ((0.0, 4), (1.2, 3), (2.6, 1), (7.0, 1)):
        monkeypatch.setattr(threads, "cores_busy_elsewhere", lambda seconds=0.0, busy=busy: busy)
        assert threads.choose_threads("auto") == (expected, f"{expected} of 4 cores free")


def test_auto_takes_a_second_thread_only_for_work_that_pays_for_it(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "cores_busy_elsewhere", lambda seconds=0.0: 0.0)
    small = threads.SECOND_THREAD_FROM - 1
    assert threads.choose_threads("auto", small) == (
        1,
        f"auto: an update of {small / 1e6:,.0f}M multiply-adds is faster on one",
    )
    assert threads.choose_threads("auto", threads.PLAYING_ONLY) == (1, "auto: playing games is faster on one")
    assert threads.choose_threads("auto", threads.SECOND_THREAD_FROM) == (2, "2 of 2 cores free")
    assert threads.choose_threads("2", small) == (2, "--threads")  # a count asked for is taken


def test_the_main_sections_update_is_priced_as_its_network_times_its_batch():
    """What auto reads of the main command's section: the Nature CNN on 4 stacked 36x36 frames (about
    0.9M multiply-adds a frame stack), a batch of 64, forward and backward (x 3)."""
    import torch
    from gymnasium import spaces

    from agents.algorithms.networks import QNetwork, network_spec
    from agents.common.configuration.config import build_section
    from agents.common.configuration.config_files import load_section
    from agents.common.configuration.registry import ALGORITHMS
    from agents.common.networks.lean_cnn import multiply_adds
    from agents.trainer.setup import update_work

    dqn = ALGORITHMS["dqn"]
    section = build_section("BallDuel-v0", load_section(dqn.config_path(), "BallDuel-v0"), {}, dqn.schema)
    frames = spaces.Box(0, 255, (4, 36, 36), "uint8")
    network = QNetwork(network_spec(frames, 9, "CnnPolicy", {}))
    expected = 3 * 64 * multiply_adds(network, torch.zeros((1, 4, 36, 36), dtype=torch.uint8))
    assert update_work(section, frames, spaces.Discrete(9)) == expected
    assert 150e6 < expected < threads.SECOND_THREAD_FROM  # the main command trains on one thread under auto


def test_a_busy_core_elsewhere_is_seen():
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert threads.cores_busy_elsewhere(0.5) > 0.5
    finally:
        spinner.kill()
        spinner.wait()


#: The variables a command sets for itself before numpy and torch load (agents/__init__.py).
THREAD_VARIABLES = ("OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS")


def _variables_in_a_fresh_process(env: dict[str, str], command: bool) -> list[str | None]:
    """What the variables are after ``import agents`` (and numpy, torch): as a command's own process
    (``python -m agents.X`` imports the package with argv[0] still "-m"), or as a library."""
    started = "import sys; sys.argv = ['-m']; " if command else ""
    code = f"{started}import agents, os, numpy, torch; print(*(os.environ.get(v) for v in {THREAD_VARIABLES!r}))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return [None if word == "None" else word for word in out.split()]


def test_a_command_makes_idle_threads_sleep_and_numpys_blas_one_thread_unless_the_user_chose():
    import os

    env = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    assert _variables_in_a_fresh_process(env, command=True) == ["PASSIVE", "1"]
    chosen = {**env, "OMP_WAIT_POLICY": "ACTIVE", "OPENBLAS_NUM_THREADS": "2"}
    assert _variables_in_a_fresh_process(chosen, command=True) == ["ACTIVE", "2"]


def test_importing_agents_as_a_library_sets_no_variable():
    import os

    env = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    assert _variables_in_a_fresh_process(env, command=False) == [None, None]


def test_a_trainer_prints_its_thread_choice_beside_the_device(tmp_path):
    argv = ["--env", "UAVGrid-v0", "--timesteps", "64", "--n-envs", "2", "--threads", "1", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "learning_starts=32", "buffer_size=100", "--eval-freq", "0", "--save-freq", "0", "--no-progress"]
    done = subprocess.run([sys.executable, "-m", "agents.custom_train", *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "device: cpu with 1 thread (--threads, passive waits)" in done.stderr


@pytest.mark.parametrize("command", ["sb3_train", "custom_train", "evaluate", "league", "compare", "tune"])
def test_every_command_refuses_a_bad_thread_count_before_writing(tmp_path, command):
    argv = {"evaluate": [str(tmp_path / "runs")], "league": ["chaser", "pusher"]}.get(command, [])
    argv += ["--threads", "0"] + ([] if command == "evaluate" else ["--log-dir", str(tmp_path / "runs")])
    done = subprocess.run([sys.executable, "-m", f"agents.{command}", *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: argument --threads: must be 'auto' or a whole number in 1..1024, got '0'")
    assert not (tmp_path / "runs").exists()
