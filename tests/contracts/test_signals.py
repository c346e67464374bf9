"""Preemption: SIGTERM (a job scheduler's stop) and Ctrl-C save what each tool has, exit 128 + the
signal, and leave nothing half made; a trainer stopped before its first step leaves no run folder."""

from __future__ import annotations

import functools
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agents import custom_train, sb3_train
from agents.artifacts.runs import read_config
from agents.common.stops import exit_on_stops_while_starting, how_stopped
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import run_cli
from agents.trainer import modules as module_learner
from agents.trainer import sb3 as sb3_learner
from tests.helpers import UAV, StoppedWhileFinalised

#: Real processes, trainer runs and studies: the unit tier (-m "not slow") leaves them out.
pytestmark = pytest.mark.slow

TRAINERS = {"sb3_train": sb3_train, "custom_train": custom_train}
#: Where each trainer's learner makes its training envs.
LEARNERS = {"sb3_train": sb3_learner, "custom_train": module_learner}
# A shell that starts the tests in the background leaves SIGINT ignored in its children.
DEFAULT_SIGINT = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)


def start(command: list[str], cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=DEFAULT_SIGINT,
        cwd=cwd,
    )


def stop_when(process: subprocess.Popen, ready: Callable[[], bool], signum: int, timeout: float = 120) -> tuple[str, str]:
    """Send ``signum`` to the process alone once ``ready()``; its output. Never leaves it running."""
    try:
        deadline = time.time() + timeout
        while not ready() and time.time() < deadline and process.poll() is None:
            time.sleep(0.2)
        process.send_signal(signum)
        return process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()


def stop_line(err: str) -> str:
    """The last line on stderr: where a stopped command says what it kept (its notes come before)."""
    return err.strip().splitlines()[-1] if err.strip() else ""


def _episodes_finished(folder: Path) -> bool:
    """Training is under way in the run under ``folder``: its monitor holds a finished episode (its
    header is two lines; a monitor alone is written as the envs start, before the first step)."""
    return any(len(path.read_text().splitlines()) > 2 for path in folder.rglob("*monitor.csv"))


@pytest.mark.parametrize("name", TRAINERS)
def test_sigterm_saves_the_interrupted_model_and_resume_continues_it(name, tmp_path):
    command = [f"agents.{name}", *UAV, "--timesteps", "1000000", "--log-dir", str(tmp_path), "--save-freq", "0"]
    command += ["--hyperparams", "buffer_size=2000", "learning_starts=200", "--save-replay-buffer", "--no-progress"]
    process = start(command)
    out, err = stop_when(process, functools.partial(_episodes_finished, tmp_path), signal.SIGTERM)
    assert process.returncode == 143, err
    # One line says what was saved, the last on stderr (the run's notes come before it), no traceback.
    assert stop_line(err).startswith("stopped by SIGTERM: model saved to") and "Traceback" not in err, err
    run = next(tmp_path.glob("*/UAVGrid-v0_1"))
    model = next(run.glob("interrupted_model.*"))
    assert (run / "replay_buffer.npz").is_file() and not (run / "summary.yml").exists()
    resumed = run_cli(TRAINERS[name].main, ["--resume", str(run), "--timesteps", "40", "--log-dir", str(tmp_path / "out")])
    assert resumed == 0
    continued = next((tmp_path / "out").glob("*/UAVGrid-v0_1"))
    assert read_config(continued)["resumed_from"] == str(model)
    if name == "custom_train":  # the steps counted on from where SIGTERM stopped them
        stopped_at = load_checkpoint(model)["progress"]["num_timesteps"]
        assert load_checkpoint(continued / "final_model.pt")["progress"]["num_timesteps"] == stopped_at + 40


@pytest.mark.parametrize("name", TRAINERS)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_before_the_first_step_leaves_no_run_folder(name, signum, tmp_path, monkeypatch, capsys):
    from agents.common.stops import Stopped

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)

    monkeypatch.setattr(LEARNERS[name], "make_train_env", stopped)
    assert run_cli(TRAINERS[name].main, [*UAV, "--log-dir", str(tmp_path)]) == 128 + signum
    assert "nothing was trained yet, and the new run folder was removed" in capsys.readouterr().err
    assert not any(path.is_dir() for path in tmp_path.glob("*/*")), "no run folder is left"
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the stop ignored further Ctrl-Cs in this process


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_while_a_command_imports_torch_exits_with_its_status_and_one_line(signum):
    """``python -m agents.X`` imports the package first (argv[0] is still "-m"), then its command's
    modules for seconds: a stop then exits as one during the run would, not by the signal itself."""
    code = f"import sys; sys.argv = ['-m']; import agents, os; os.kill(os.getpid(), {int(signum)}); import torch"
    process = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, preexec_fn=DEFAULT_SIGINT
    )
    assert process.returncode == 128 + signum, process.stderr
    assert process.stderr == f"{how_stopped(signum)} while starting: nothing was written\n"


def test_a_command_that_has_started_handles_ctrl_c_itself(capsys):
    """The starting handler hands Ctrl-C on to the command's own handling (which saves what it has)."""
    previous = signal.getsignal(signal.SIGINT)
    exit_on_stops_while_starting()
    try:
        assert run_cli(lambda argv: signal.raise_signal(signal.SIGINT)) == 130
        assert capsys.readouterr().err == "interrupted\n"
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigterm_stops_a_tune_worker_its_trial_saved_and_the_study_continues(tmp_path):
    command = ["agents.tune", "--env", "UAVGrid-v0", "--algo", "custom", "--trials", "3", "--timesteps", "400000"]
    command += ["--eval-freq", "200000", "--n-envs", "2", "--hyperparams", "buffer_size=2000", "learning_starts=200"]
    command += ["--log-dir", str(tmp_path)]
    process = start(command)
    trial_runs = tmp_path / "UAVGrid-v0-custom" / "trial_0"  # training under way: a finished episode
    out, err = stop_when(process, functools.partial(_episodes_finished, trial_runs), signal.SIGTERM)
    assert process.returncode == 143, err
    assert "Traceback" not in err and "stopped by SIGTERM" in err
    assert "trial 0: stopped (its model saved in its folder)" in out
    assert list(tmp_path.glob("*/trial_0/*/*/interrupted_model.pt"))
    assert not list(tmp_path.glob("*/trial_1")), "the worker stopped: no next trial"


def _printed(process: subprocess.Popen, text: str) -> Callable[[], bool]:
    """A ready() for stop_when: true once the process has printed a line holding ``text``
    (its stdout is read line by line meanwhile; the lines are kept in ``ready.lines``)."""
    import threading

    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True).start()

    def ready() -> bool:
        return any(text in line for line in lines)

    ready.lines = lines  # type: ignore[attr-defined]
    return ready


def test_a_stop_during_a_leagues_final_write_still_writes_and_says_where(tmp_path, monkeypatch, capsys):
    from agents import league

    real_write = league.write

    def write_interrupted(*args):  # the stop lands while the league's files are being written
        signal.raise_signal(signal.SIGTERM)
        return real_write(*args)

    monkeypatch.setattr(league, "write", write_interrupted)
    assert run_cli(league.main, ["chaser", "pusher", "--games", "2", "--log-dir", str(tmp_path)]) == 143
    err = capsys.readouterr().err
    assert stop_line(err).startswith("stopped by SIGTERM: all 1 pairs were played and are rated in"), err
    folder = next(tmp_path.glob("league/league_*"))
    assert all((folder / name).is_file() for name in ("league.csv", "results.csv", "report.md", "elo.png"))


def test_sigterm_stops_a_league_which_keeps_the_pairs_it_played(tmp_path):
    players = ["still", "random", "chaser", "pusher", "anchor", "sprinter"]
    process = start(["agents.league", *players, "--env", "BallSumo-v0", "--games", "400", "--log-dir", str(tmp_path)])
    out, err = stop_when(process, _printed(process, "pair 2/15"), signal.SIGTERM)  # a pair played, 13 to go
    assert process.returncode == 143, err
    assert stop_line(err).startswith("stopped by SIGTERM: the ") and "pairs played so far are rated in" in err
    folder = next(tmp_path.glob("league/league_*"))
    rows = (folder / "results.csv").read_text().splitlines()
    assert rows[0] == "player,opponent,wins,draws,losses" and len(rows) == 1 + 15
    played = [row for row in rows[1:] if sum(map(int, row.split(",")[2:])) > 0]
    assert 2 <= len(played) < 15, "stopped after two pairs, before its last"


@pytest.mark.parametrize("name", TRAINERS)
def test_a_stop_during_a_checkpoint_write_waits_for_the_checkpoint(name, tmp_path, monkeypatch, capsys):
    """SIGTERM that lands while a checkpoint is being written (inside torch's zip writer, where an
    exception comes out as a RuntimeError) waits for the file, then stops the run as ever: the
    checkpoint is whole, the interrupted model saved, exit 143."""
    import torch

    real_save, saves = torch.save, []

    def save_and_be_stopped(obj, f, *args, **kwargs):
        saves.append(f)
        if len(saves) == 1:  # the first file a run writes with --eval-freq 0: its first checkpoint
            signal.raise_signal(signal.SIGTERM)
        return real_save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save_and_be_stopped)
    argv = [*UAV, "--timesteps", "2000", "--save-freq", "200", "--eval-freq", "0", "--no-progress", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "buffer_size=500", "learning_starts=100"]
    assert run_cli(TRAINERS[name].main, argv) == 128 + signal.SIGTERM
    run = next(tmp_path.glob("*/UAVGrid-v0_1"))
    checkpoints = sorted((run / "checkpoints").iterdir())
    assert [path.name.split(".")[0] for path in checkpoints] == ["model_200_steps"], (
        f"the checkpoint being written is whole ({saves})"
    )
    assert not list(run.rglob(".*tmp-*")), "no temporary file left"
    assert any(run.glob("interrupted_model.*"))
    assert "stopped by SIGTERM" in capsys.readouterr().err


@pytest.mark.parametrize("name", TRAINERS)
def test_a_stop_python_drops_before_the_first_step_stops_the_run_after_it(name, tmp_path, monkeypatch, capsys):
    """SIGTERM whose exception is raised where Python prints it and drops it ("Exception ignored
    in ...": a finalizer, as once inside Ray's start) stopped nothing, and the run trained on:
    it now stops after its first step, its model saved, exit 143."""
    real_make_train_env = LEARNERS[name].make_train_env

    def dropped_stop_then_envs(*args, **kwargs):
        StoppedWhileFinalised(signal.SIGTERM)
        return real_make_train_env(*args, **kwargs)

    monkeypatch.setattr(LEARNERS[name], "make_train_env", dropped_stop_then_envs)
    argv = [*UAV, "--timesteps", "3000", "--eval-freq", "0", "--no-progress", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "buffer_size=500", "learning_starts=100"]  # had the stop been lost, it ends in 3000 steps
    assert run_cli(TRAINERS[name].main, argv) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert stop_line(err).startswith("stopped by SIGTERM: model saved to") and "Exception ignored" not in err, err
    assert any(next(tmp_path.glob("*/UAVGrid-v0_1")).glob("interrupted_model.*"))


def _processes_naming(text: str) -> list[int]:
    """The processes whose command line holds ``text`` (Linux's /proc)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:  # ended meanwhile
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads the processes from Linux's /proc")
def test_sigterm_to_time_to_skill_stops_the_run_it_started_which_saves_its_model(tmp_path):
    """Before, the benchmark ended and its run trained on, an orphan, into the folder."""
    command = ["benchmarks.time_to_skill", "--learners", "custom", "--seeds", "0", "--timesteps", "1000000"]
    command += ["--eval-freq", "1000", "--eval-episodes", "2", "--log-dir", str(tmp_path), "--no-progress"]
    process = start(command)
    out, err = stop_when(process, functools.partial(_episodes_finished, tmp_path), signal.SIGTERM)
    assert process.returncode == 143, err
    assert not _processes_naming(str(tmp_path)), "the run the benchmark started is still running"
    assert any(tmp_path.rglob("interrupted_model.pt")), "the run was stopped as a trainer is, its model saved"
