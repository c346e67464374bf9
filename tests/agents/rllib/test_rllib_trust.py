"""An RLlib run folder is data: a resume reads no pickle from its checkpoint (a payload planted in
any file of it never runs), its models are read as the champion's are, and a stop signal to the
trainer's process group with env runners leaves an interrupted model to resume from.
Runs where the rllib extra is installed (CI's oldest-gymnasium stage)."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
msgpack = pytest.importorskip("msgpack")  # the rllib extra's, as Ray

from agents import evaluate, train  # noqa: E402  (after the skip: these tests need Ray)
from agents.common.errors import UsageError  # noqa: E402
from agents.rllib.checkpoint_check import check_checkpoint  # noqa: E402
from agents.session.cli import run_cli  # noqa: E402
from tests.helpers import copy_run, refused  # noqa: E402

QUICK = ["--n-envs", "2", "--timesteps", "128", "--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]
SMALL = ["--hyperparams", "n_steps=64", "batch_size=64", "n_epochs=1"]


class Payload:
    """Unpickling this touches ``marker``: what a crafted checkpoint would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def rllib_run(tmp_path_factory):
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        log_dir = tmp_path_factory.mktemp("rllib")
        argv = [*QUICK, "--algo", "rllib_ppo", "--env", "BallDuel-v0", "--log-dir", str(log_dir), *SMALL]
        assert run_cli(train.main, argv) == 0
        yield next((log_dir / "rllib_ppo").iterdir())
    finally:
        ray.shutdown()


def resume(run: Path, log_dir: Path) -> list[str]:
    return ["--resume", str(run), "--timesteps", "64", "--log-dir", str(log_dir), "--no-progress", "--eval-freq", "0"]


def _object_array_state(path: Path, marker: Path) -> None:
    """Rewrite a msgpack state so that one value is msgpack-numpy's object array: a pickle."""
    payload = {b"nd": True, b"kind": b"O", b"type": "|O", b"shape": [1], b"data": pickle.dumps(Payload(marker))}
    path.write_bytes(msgpack.packb({"weights": payload}, use_bin_type=True))


def test_a_payload_in_every_file_of_a_checkpoint_never_runs_on_resume(rllib_run, tmp_path, capsys):
    checkpoint = rllib_run / "final_model.rllib"
    files = sorted(path.relative_to(checkpoint) for path in checkpoint.rglob("*") if path.is_file())
    assert any(name.suffix == ".pkl" for name in files) and any(name.suffix == ".msgpack" for name in files)
    for k, name in enumerate(files):
        run = copy_run(rllib_run, tmp_path / f"case{k}")
        marker = tmp_path / f"ran{k}"
        target = run / "final_model.rllib" / name
        if name.suffix == ".msgpack":
            _object_array_state(target, marker)  # a state holding a pickle
        else:
            target.write_bytes(pickle.dumps(Payload(marker)))
        capsys.readouterr()
        status = run_cli(train.main, resume(run, tmp_path / f"out{k}"))
        assert not marker.exists(), f"a payload in {name} ran"
        if name.suffix == ".msgpack":  # refused before Ray reads it, in one line, no folder
            assert status == 2 and "holds an array of Python objects" in capsys.readouterr().err
            assert not (tmp_path / f"out{k}").exists()
        else:  # Ray's own files beside the state (class_and_ctor_args.pkl, metadata.json): a restore never reads them
            assert status == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: (c / "algorithm_state.msgpack").rename(c / "algorithm_state.pkl"), "holds 'algorithm_state.pkl'"),
        (lambda c: (c / "env_runner" / "state.msgpack").unlink(), "must hold one state file (.msgpack); it holds none"),
        (lambda c: (c / "learner_group" / "learner" / "state.pkl").write_bytes(b"x"), "holds 'state.pkl'"),
        (lambda c: (c / "algorithm_state.msgpack").write_bytes(b"\xc1"), "is not a msgpack state"),
        (lambda c: (c / "x.py").write_text("print(1)"), "holds 'x.py'"),
        (
            lambda c: __import__("shutil").rmtree(c / "learner_group" / "learner" / "rl_module" / "default_policy"),
            "has no learner module",
        ),
    ],
    ids=["pkl-for-msgpack", "missing-state", "extra-pkl", "garbage", "stranger", "no-module"],
)
def test_a_checkpoint_not_made_as_ours_is_refused_in_one_line_before_ray(rllib_run, tmp_path, capsys, change, message):
    run = copy_run(rllib_run, tmp_path)
    change(run / "final_model.rllib")
    with pytest.raises(UsageError, match="RLlib checkpoint"):
        check_checkpoint(run / "final_model.rllib", ("learner", "default_policy"))
    assert message in refused(capsys, train.main, resume(run, tmp_path / "out"), tmp_path / "out")


def _array(dtype: str, shape: list, data: bytes, kind: bytes = b"") -> dict:
    return {b"nd": True, b"type": dtype, b"kind": kind, b"shape": shape, b"data": data}


#: What msgpack-numpy would build from raw bytes, each as a module's state holds one value.
HOSTILE_STATES = {
    "structured-with-object": (
        _array([["a", "|O"]], [1], b"A" * 8, kind=b"V"),  # an object field: a pointer read from the file
        "only plain numbers are read",
    ),
    "scalar-object": ({b"nd": False, b"type": "|O", b"data": b"AAAAAAAA"}, "an array of Python objects"),
    "lying-shape": (_array("<f4", [1000, 1000], b"\0" * 16), "that its 16 bytes do not fill"),
    "bad-dtype": (_array("<V8", [1], b"\0" * 8), "only plain numbers are read"),
    "object-kind": (_array("<f4", [1], b"\0" * 4, kind=b"O"), "an array of Python objects"),
    "complex": ({b"complex": True, b"data": "1+2j"}, "a complex number"),
    "ext-type": (msgpack.ExtType(42, b"payload"), "an ext type"),
    "raw-bytes": (b"\x80\x04K\x01.", "raw bytes"),
    "extra-field": ({**_array("<f4", [1], b"\0" * 4), b"hook": "x"}, "not laid out as ours are"),
}


@pytest.mark.parametrize("value, message", HOSTILE_STATES.values(), ids=list(HOSTILE_STATES))
def test_a_state_holding_what_ours_never_hold_is_refused_before_ray(rllib_run, tmp_path, capsys, value, message):
    run = copy_run(rllib_run, tmp_path)
    state = run / "final_model.rllib" / "learner_group" / "learner" / "rl_module" / "default_policy" / "module_state.msgpack"
    state.write_bytes(msgpack.packb({"weights": value}, use_bin_type=True))
    with pytest.raises(UsageError, match=message):
        check_checkpoint(run / "final_model.rllib", ("learner", "default_policy"))
    assert message in refused(capsys, train.main, resume(run, tmp_path / "out"), tmp_path / "out")


def test_a_state_file_under_a_name_ray_does_not_read_there_is_refused(rllib_run, tmp_path, capsys):
    run = copy_run(rllib_run, tmp_path)
    module = run / "final_model.rllib" / "learner_group" / "learner" / "rl_module" / "default_policy"
    (module / "module_state.msgpack").rename(module / "state.msgpack")  # Ray would then unpickle module_state.pkl
    err = refused(capsys, train.main, resume(run, tmp_path / "out"), tmp_path / "out")
    assert "holds 'state.msgpack' where Ray reads module_state.msgpack" in err


def _weights(path: Path, **changes: np.ndarray) -> None:
    with np.load(path) as saved:
        arrays = {name: saved[name] for name in saved.files}
    np.savez(path, **{**arrays, **changes})


def _first_weight(path: Path) -> str:
    with np.load(path) as saved:
        return next(name for name in saved.files if saved[name].ndim == 2)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: p.write_bytes(b""), "not an .npz of plain arrays"),
        (lambda p: p.write_bytes(p.read_bytes()[:200]), "not an .npz of plain arrays"),
        (lambda p: _weights(p, **{_first_weight(p): np.array(["a", "b"])}), "a model holds numbers"),
        (lambda p: _weights(p, **{_first_weight(p): np.full((256, 10), np.nan, np.float32)}), "NaN or infinite"),
        (lambda p: _weights(p, **{_first_weight(p): np.zeros((3, 3), np.float32)}), "do not fit the run's network"),
    ],
    ids=["empty", "truncated", "strings", "nan", "shape"],
)
def test_a_damaged_rllib_model_is_refused_in_one_line_as_the_champion_is(rllib_run, tmp_path, capsys, damage, message):
    run = copy_run(rllib_run, tmp_path)
    damage(run / "final_model.npz")
    assert message in refused(capsys, evaluate.main, [str(run), "--episodes", "1", "--no-progress"])


@pytest.mark.slow  # a real trainer process with two env runners
def test_sigterm_to_the_process_group_with_env_runners_saves_an_interrupted_model(tmp_path):
    command = [sys.executable, "-m", "agents.train", "--algo", "rllib_ppo", "--env", "BallDuel-v0", *QUICK[:-2]]
    command += ["--timesteps", "1000000", "--log-dir", str(tmp_path), *SMALL, "env_runners=2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.time() + 180  # trained once an iteration's row is in progress.csv
        while time.time() < deadline and not any(
            len(csv.read_text().splitlines()) > 1 for csv in tmp_path.glob("*/*/progress.csv")
        ):
            time.sleep(0.5)
        os.killpg(process.pid, signal.SIGTERM)  # as a scheduler does: the trainer and everything it started
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and "stopped by SIGTERM: model saved to" in err
    run = next(tmp_path.glob("rllib_ppo/BallDuel-v0_1"))
    assert (run / "interrupted_model.npz").is_file() and (run / "interrupted_model.rllib").is_dir()
    check_checkpoint(run / "interrupted_model.rllib", ("default_policy",))


@pytest.mark.parametrize("after", [0.0, 1.5, 3.0, 5.0])
def test_sigterm_while_ray_starts_is_one_line_and_exit_143_whichever_thread_takes_it(after, tmp_path):
    """From the run folder's making to the first step, ray.init and the algorithm's build: Ray sets
    a SIGTERM handler that exits with status 15 and its C++ threads one that aborts (134) with a
    stack trace, so a stop that landed on another thread there left a run folder and no line."""
    command = [sys.executable, "-m", "agents.train", "--algo", "rllib_ppo", "--env", "BallDuel-v0", *QUICK[:-2]]
    command += ["--timesteps", "1000000", "--log-dir", str(tmp_path), *SMALL]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not any(tmp_path.glob("*/*/config.yml")) and process.poll() is None:
            time.sleep(0.05)
        time.sleep(after)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and "SIGTERM received" not in err, err
    # One line of its own: RLlib's notes as it builds the algorithm stay off it too. A stop that lands
    # once Ray has started (on a quick machine, within the later waits) follows the run's own two notes.
    *before, last = err.strip().splitlines()
    ours = ("device: ", "BallDuel-v0: MlpPolicy, 2 envs")
    assert last.startswith("stopped by SIGTERM: ") and len(before) in (0, 2), err
    assert all(line.startswith(ours) for line in before), err
    if "run folder was removed" in last:
        assert not any(tmp_path.glob("*/*/config.yml"))
    else:
        assert any(tmp_path.glob("*/*/interrupted_model.npz")), err


STOP_ON_RAYS_THREADS = """
import os, signal, sys, time
import ray
from agents.trainer.rllib import ray_sets_no_sigterm_handlers
seen = []
signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
with ray_sets_no_sigterm_handlers():
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])  # so the kernel hands it to one of Ray's threads
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(0.5)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
time.sleep(0.1)
ray.shutdown()
print("handled", seen)
"""


def test_a_sigterm_that_lands_on_one_of_rays_threads_after_it_started_reaches_the_trainers_handler():
    """The timing-free half of the test above: Ray's core worker started inside
    ray_sets_no_sigterm_handlers leaves no C++ SIGTERM handler behind (which aborted with a stack
    trace on whichever of its threads took the signal)."""
    done = subprocess.run([sys.executable, "-c", STOP_ON_RAYS_THREADS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "SIGTERM received" not in done.stderr, done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"handled [{int(signal.SIGTERM)}]", done.stdout


@pytest.mark.parametrize(
    "address, message",
    [
        ("", "--address '': a Ray cluster's head as HOST:PORT"),
        ("127.0.0.1", "--address '127.0.0.1': a Ray cluster's head as HOST:PORT"),
        ("127.0.0.1:99999", "--address '127.0.0.1:99999': a Ray cluster's head as HOST:PORT"),
        ("127.0.0.1:{free}", "no Ray head answers at 127.0.0.1:{free} (tried for up to 10 s: Connection refused)"),
        ("ray://127.0.0.1:{free}", "no Ray head answers at 127.0.0.1:{free}"),
    ],
)
def test_an_address_where_no_ray_head_answers_is_refused_in_one_line_before_any_folder(address, message, tmp_path, capsys):
    import socket

    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
        argv = ["--algo", "rllib_ppo", "--env", "BallDuel-v0", "--address", address.format(free=free)]
        err = refused(capsys, train.main, [*argv, "--log-dir", str(tmp_path)], tmp_path)
    assert message.format(free=free) in err
