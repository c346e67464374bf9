"""The benchmarks show their progress as agents.train does (a line now and then when piped; here
every update, the interval set to 0), each result as it comes, and --no-progress leaves the results
alone; and the thread that keeps the lines coming during one long measurement stops with it."""

from __future__ import annotations

import re
import threading

import pytest

from agents.session import console
from agents.session.cli import run_cli
from agents.session.console import every
from benchmarks import env_throughput, floor, frame_probe, naive_vs_batched, outsiders, uav_search
from benchmarks.common import Measurements

#: Each benchmark at a small budget: its unit and the count its progress lines go up to.
COMMANDS = {
    "frame_probe": (frame_probe.main, ["--sizes", "36", "--stacks", "2", "--games", "5", "--epochs", "1"], "measurement", 2),
    # One vector size: each size starts SubprocVecEnv's workers anew, nearly all of this command's time.
    "env_throughput": (
        env_throughput.main,
        ["--steps", "10", "--rounds", "1", "--vector-sizes", "2", "--vector-steps", "10"],
        "measurement",
        2,
    ),
    "naive_vs_batched": (naive_vs_batched.main, ["--calls", "1", "--batch-size", "8"], "measurement", 1),
    "floor": (floor.main, ["--envs", "UAVGrid-v0", "--threads", "1"], "measurement", 3),
    "outsiders": (outsiders.main, ["chaser", "--games", "2", "--only", "cointoss", "shover"], "game", 4),
    "uav_search": (uav_search.main, ["--episodes", "2", "--futures", "2", "--horizon", "2"], "episode", 4),
}


@pytest.fixture
def every_update(monkeypatch, tmp_path):
    monkeypatch.setattr(console, "PLAIN_EVERY_S", 0.0)
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))  # the JSON files, not the repository's


@pytest.mark.parametrize("name", COMMANDS)
def test_a_benchmark_prints_its_progress_and_no_progress_silences_it(name, every_update, capsys):
    main, argv, unit, total = COMMANDS[name]
    assert run_cli(main, argv) == 0
    shown = capsys.readouterr()
    counts = [int(m.group(1)) for m in re.finditer(rf"^{unit} (\d+) of {total} ", shown.err, re.M)]
    assert counts and counts == sorted(counts) and counts[-1] == total, counts
    assert not re.search(rf"{unit} \d+ of ", shown.out)  # standard output: the results alone
    assert run_cli(main, [*argv, "--no-progress"]) == 0
    shown = capsys.readouterr()
    assert not re.search(rf"^{unit} \d+ of ", shown.err, re.M)
    assert "|" in shown.out  # the results still print


def test_measurements_print_each_result_and_progress_only_when_enabled(every_update, capsys):
    for enabled in (True, False):
        with Measurements(2, enabled) as shown:
            shown.write("| header |")
            shown.result("| first |")
            shown.result("| second |")
        shown = capsys.readouterr()
        assert shown.out == "| header |\n| first |\n| second |\n"
        assert ("measurement 2 of 2 " in shown.err) == enabled


def test_every_calls_while_the_body_runs_and_not_after():
    called = threading.Event()
    calls = []

    def call():
        calls.append(1)
        called.set()

    with every(0.001, call):
        assert called.wait(timeout=30)
    after = len(calls)
    threading.Event().wait(0.05)
    assert len(calls) == after
