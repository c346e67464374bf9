"""What a user sees while training: evaluations, progress in a terminal and in a log, the time left."""

from __future__ import annotations

import importlib
import io
import sys

import pytest

import agents
from agents.session import console as console_module
from agents.session.cli import run_cli
from agents.session.console import Console


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(console_module.time, "monotonic", fake)
    return fake


def test_a_log_gets_a_plain_progress_line_at_once_then_every_few_seconds(clock):
    stream, results = io.StringIO(), io.StringIO()  # not a terminal, as under "2> log" or a job scheduler
    console = Console(total=1000, learning_starts=100, stream=stream, results=results, plain_every=30)
    for step in range(0, 1001, 10):
        clock.now += 1.0
        console.update(step)
    lines = stream.getvalue().splitlines()
    assert 3 <= len(lines) <= 4, lines  # at once, then about every 30 s over 100 s
    assert lines[0].startswith("step 0 of 1,000 ")
    assert all(line.startswith("step ") and " of 1,000 " in line for line in lines)
    console.write("eval at 500 steps: return 1.0")
    console.close()
    console.close()  # closing twice prints nothing more
    assert results.getvalue() == "eval at 500 steps: return 1.0\n"  # the results alone, no progress among them
    assert stream.getvalue().splitlines() == lines


def test_the_time_left_waits_for_learning_then_uses_its_rate(clock):
    console = Console(total=10_000, learning_starts=1000, stream=io.StringIO())
    console.update(500)
    assert "estimating (learning starts at 1,000 steps)" in console.time_left(500, clock.now)
    clock.now += 1.0
    console.update(1000)  # learning starts: warm-up steps were fast, learning ones are slow
    clock.now += 10.0
    assert console.time_left(1100, clock.now) == "10 steps/s, about 15 min left"


def test_work_that_takes_minutes_a_piece_is_counted_a_minute(clock):
    console = Console(total=20, unit="measurement", stream=io.StringIO())
    console.update(0)
    clock.now += 120.0
    assert console.time_left(2, clock.now) == "1.0 measurements/min, about 18 min left"


def test_no_progress_keeps_the_notes():
    stream, results = io.StringIO(), io.StringIO()
    console = Console(total=100, enabled=False, stream=stream, results=results, plain_every=0)
    console.update(50)
    console.write("eval at 50 steps")
    assert (stream.getvalue(), results.getvalue()) == ("", "eval at 50 steps\n")


def test_a_terminal_gets_a_bar(monkeypatch, clock):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    console = Console(total=100, stream=stream, results=stream)
    console.update(40)
    console.write("eval line")
    console.close()
    console.close()
    text = stream.getvalue()
    assert "40/100" in text and "eval line" in text


def test_without_the_agents_extra_the_command_says_what_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "yaml" else real(name, *args))
    monkeypatch.setattr(sys, "argv", ["-m"])
    with pytest.raises(SystemExit) as exit_info:
        importlib.reload(agents)
    assert exit_info.value.code == 2
    assert "the agents need the 'agents' extra (missing: yaml): pip install 'ballenvs[agents]'" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["python"])
    with pytest.raises(ImportError, match="missing: yaml"):
        importlib.reload(agents)
    monkeypatch.undo()
    importlib.reload(agents)  # leave the package whole for the tests after this one


@pytest.mark.parametrize("trainer_name", ["sb3_train", "custom_train"])
def test_training_prints_a_line_per_evaluation_with_the_win_rate(tmp_path, capsys, trainer_name):
    trainer = importlib.import_module(f"agents.{trainer_name}")
    argv = ["--env", "BallDuel-v0", "--timesteps", "400", "--n-envs", "2", "--log-dir", str(tmp_path), "--no-progress"]
    argv += ["--env-kwargs", "obs_type=state", "max_episode_steps=50", "--hyperparams", "policy=MlpPolicy", "frame_stack=1"]
    argv += ["buffer_size=500", "learning_starts=100", "--eval-freq", "200", "--eval-episodes", "3"]
    assert run_cli(trainer.main, argv) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("eval at ")]
    assert [line.split(":")[0] for line in lines] == ["eval at 200 steps", "eval at 400 steps"]
    assert all(" over 3 episodes, wins " in line for line in lines)
    assert "(new best: best_model saved)" in lines[0]
