"""Every command that plays or trains long shows its progress as agents.train does: a line now and
then when its output is not a terminal (here: every update, the interval set to 0), none with
--no-progress, the same flag on each; on standard error, with the notes, so that standard output
holds the results alone (``agents.evaluate ... | tee results.md``)."""

from __future__ import annotations

import re

import pytest

from agents import compare, evaluate, exploit, league, record, train
from agents.session import console
from agents.session.cli import run_cli

#: Each command at a small budget, and the count its progress lines go up to.
COMMANDS = {
    "record": (record.main, ["chaser", "--episodes", "3", "--env-kwargs", "obs_type=state"], "game", 3),
    "league": (league.main, ["chaser", "pusher", "still", "--games", "4"], "game", 12),
    "evaluate": (evaluate.main, ["{run}", "--episodes", "3"], "game", 3),
    "evaluate all": (evaluate.main, ["{run}", "--opponent", "all", "--episodes", "2"], "game", 16),
    "exploit search": (exploit.main, ["chaser", "--search-only", "--games", "4"], "game", 4),
    "exploit learned": (exploit.main, ["chaser", "--learned-only", "--games", "2", "--budget", "256"], "step", 256),
}


@pytest.fixture
def every_update(monkeypatch):
    monkeypatch.setattr(console, "PLAIN_EVERY_S", 0.0)


@pytest.fixture(scope="session")
def run(tmp_path_factory):
    """A short self-play run of our DQN on BallSumo-v0's state, for agents.evaluate to play."""
    from tests.helpers import shared_training

    argv = ["--env", "BallSumo-v0", "--algo", "custom", "--timesteps", "64", "--n-envs", "2", "--eval-freq", "0"]
    argv += ["--no-progress", "--hyperparams", "learning_starts=32", "buffer_size=100"]
    return shared_training(tmp_path_factory, "progress_run", train.main, argv, "custom/BallSumo-v0_1")


@pytest.mark.parametrize("name", COMMANDS)
def test_a_long_command_prints_its_progress_and_no_progress_silences_it(
    name, every_update, run, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # record's datasets, league's folders
    main, argv, unit, total = COMMANDS[name]
    argv = [str(run) if arg == "{run}" else arg for arg in argv]
    assert run_cli(main, argv) == 0
    shown = capsys.readouterr()
    counts = [int(m.group(1).replace(",", "")) for m in re.finditer(rf"^{unit} ([\d,]+) of {total:,} ", shown.err, re.M)]
    assert counts and counts == sorted(counts) and counts[-1] == total, counts
    assert shown.out.strip() and not re.search(rf"{unit} [\d,]+ of |on cpu with", shown.out), shown.out
    assert run_cli(main, [*argv, "--no-progress", *(["--data-path", "more"] if name == "record" else [])]) == 0
    assert not re.search(rf"^{unit} [\d,]+ of ", capsys.readouterr().err, re.M)


def test_training_prints_its_results_on_stdout_and_the_rest_on_stderr(every_update, tmp_path, capsys):
    argv = ["--env", "BallSumo-v0", "--algo", "custom", "--timesteps", "128", "--n-envs", "2", "--eval-freq", "64"]
    argv += ["--eval-episodes", "1", "--hyperparams", "learning_starts=32", "buffer_size=100", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    shown = capsys.readouterr()
    results = shown.out.splitlines()
    assert [line.split(":")[0] for line in results[:-1]] == ["eval at 64 steps", "eval at 128 steps"], results
    assert results[-1].startswith("trained 128 steps in ")
    assert shown.err.startswith("device: cpu") and re.search(r"^step [\d,]+ of 128 ", shown.err, re.M)


def test_compare_shows_its_runs_progress_unless_asked_not_to(every_update, tmp_path, capsys):
    argv = ["--agents", "custom", "--seeds", "1", "--timesteps", "300", "--score-episodes", "2", "--eval-episodes", "1"]
    argv += ["--env-kwargs", "max_episode_steps=50", "--hyperparams", "learning_starts=100", "buffer_size=500"]
    assert run_cli(compare.main, [*argv, "--log-dir", str(tmp_path / "a")]) == 0
    shown = capsys.readouterr()
    assert re.search(r"^step [\d,]+ of 300 ", shown.err, re.M) and re.search(r"^\[run 1/1\] ", shown.err, re.M)
    assert not re.search(r"^step [\d,]+ of |^\[run ", shown.out, re.M)
    assert run_cli(compare.main, [*argv, "--log-dir", str(tmp_path / "b"), "--no-progress"]) == 0
    assert not re.search(r"^step [\d,]+ of ", capsys.readouterr().err, re.M)
