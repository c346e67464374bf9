"""What the tools promise a careless or hostile user: nothing runs from a file, resume is exact,
bad input fails before any run folder as one line (exit 2), bugs keep their traceback, and
Ctrl-C leaves a model to resume from (exit 130)."""

from __future__ import annotations

import functools
import io
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from agents import compare, custom_train, sb3_train
from agents.artifacts.runs import atomic_path, latest_model, read_config
from agents.common.configuration.config import ConfigError, parse_kwargs, parse_overrides
from agents.evaluate import main as evaluate_main
from agents.session.cli import run_cli
from tests.helpers import TINY, UAV, copy_run, refused

TRAINERS = [sb3_train, custom_train]
TRAINER_IDS = ["sb3_train", "custom_train"]


class Payload:
    """Unpickling this touches ``marker``: what a crafted model or buffer would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


# -- 1. loading a file never runs code from it -----------------------------------------------------


def plant_in_zip(model_path: Path, marker: Path) -> None:
    """Rewrite an SB3 .zip so that its data entry holds pickled payloads, as a crafted file would."""
    serialized = {
        ":type:": "<class 'x'>",
        ":serialized:": __import__("base64").b64encode(pickle.dumps(Payload(marker))).decode(),
    }
    with zipfile.ZipFile(model_path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(entries["data"])
    data["observation_space"] = serialized
    data["evil"] = serialized
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(model_path, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)


def test_crafted_sb3_models_never_run_their_payload(sb3_run, tmp_path, capsys):
    run = copy_run(sb3_run, tmp_path)
    marker = tmp_path / "pwned"
    for model in [*run.glob("*.zip"), *run.glob("checkpoints/*.zip")]:
        plant_in_zip(model, marker)
    assert run_cli(evaluate_main, [str(run / "final_model.zip"), "--episodes", "1"]) == 0
    assert (
        run_cli(
            sb3_train.main,
            ["--resume", str(run), "--timesteps", "50", "--log-dir", str(tmp_path / "resumed"), "--no-progress"],
        )
        == 0
    )
    manifest = {
        "env_id": "UAVGrid-v0",
        "env_kwargs": {},
        "timesteps": 300,
        "seeds": 1,
        "eval_freq": 100,
        "eval_episodes": 1,
        "score_episodes": 1,
        "hardware": "test",
        "command": "test",
        "baselines": {"greedy": 1.0},
        "heuristic": "greedy",
        "runs": {"SB3 DQN": [str(run)]},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    run_cli(compare.main, ["--from-runs", str(tmp_path)])  # the run has no evaluations: its outcome is beside the point
    capsys.readouterr()
    assert not marker.exists(), "a model file ran code"


def test_a_model_without_its_run_folder_needs_its_env_and_is_never_unpickled(sb3_run, tmp_path, capsys):
    lone = tmp_path / "model.zip"
    shutil.copy(sb3_run / "final_model.zip", lone)
    err = refused(capsys, evaluate_main, [str(lone)])
    assert "has no run folder: say which env it plays with --env" in err
    marker = tmp_path / "pwned"
    plant_in_zip(lone, marker)
    assert run_cli(evaluate_main, [str(lone), "--env", "UAVGrid-v0", "--episodes", "1"]) == 0
    assert not marker.exists()


@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_crafted_replay_buffers_never_run_their_payload(trainer, sb3_run, custom_run, tmp_path, capsys):
    run = copy_run(sb3_run if trainer is sb3_train else custom_run, tmp_path)
    marker = tmp_path / "pwned"
    payload = np.empty(1, dtype=object)
    payload[0] = Payload(marker)
    with np.load(run / "replay_buffer.npz") as data:
        arrays = dict(data)
    arrays["actions"] = payload
    with open(run / "replay_buffer.npz", "wb") as file:
        np.savez(file, **arrays)
    (run / "replay_buffer.pkl").write_bytes(pickle.dumps(Payload(marker)))  # what SB3 would have read
    err = refused(capsys, trainer.main, ["--resume", str(run), "--timesteps", "50", "--log-dir", str(tmp_path / "out")])
    assert "cannot load replay buffer" in err
    assert not marker.exists()


def test_crafted_custom_checkpoints_never_run_their_payload(custom_run, tmp_path, capsys):
    run = copy_run(custom_run, tmp_path)
    marker = tmp_path / "pwned"
    torch.save({"format": "ballenvs-custom-dqn/1", "spec": Payload(marker)}, run / "final_model.pt")
    err = refused(capsys, evaluate_main, [str(run / "final_model.pt")])
    assert "not a weights-only tensor file" in err and "weights_only" not in err.split(":", 2)[-1]
    assert not marker.exists()


def claim_cuda(raw: bytes) -> bytes:
    """Re-save torch-saved bytes with every tensor's storage tagged ``cuda:0``, as a model saved
    on a GPU machine is: loading it without mapping its tensors fails on a CPU-only machine."""
    state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    real_tag = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        buffer = io.BytesIO()
        torch.save(state, buffer)
    finally:
        torch.serialization.location_tag = real_tag
    return buffer.getvalue()


@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_a_model_saved_on_cuda_evaluates_on_the_cpu(trainer, sb3_run, custom_run, tmp_path, capsys):
    run = copy_run(sb3_run if trainer is sb3_train else custom_run, tmp_path)
    model = run / ("final_model.zip" if trainer is sb3_train else "final_model.pt")
    if model.suffix == ".zip":
        with zipfile.ZipFile(model) as archive:
            entries = {name: archive.read(name) for name in archive.namelist()}
        entries = {name: claim_cuda(raw) if name.endswith(".pth") else raw for name, raw in entries.items()}
        with zipfile.ZipFile(model, "w") as archive:
            for name, raw in entries.items():
                archive.writestr(name, raw)
        tagged = entries["policy.pth"]
    else:
        tagged = claim_cuda(model.read_bytes())
        model.write_bytes(tagged)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(io.BytesIO(tagged), weights_only=True)  # the file does claim CUDA
    assert run_cli(evaluate_main, [str(model), "--episodes", "2", "--device", "cpu"]) == 0
    assert "2 episodes, return" in capsys.readouterr().out


ESCAPES = [
    "().__class__.__base__.__subclasses__()",
    "dict(net_arch=[64], x=().__class__.__base__.__subclasses__())",
    "dict(activation_fn=nn.modules.module.torch.os.system('touch {marker}'))",
    "__import__('os').system('touch {marker}')",
    "dict(net_arch=[64], **{{'a': 1}})",
]


@pytest.mark.parametrize("text", ESCAPES)
def test_kwargs_strings_are_parsed_never_run(text, tmp_path):
    marker = tmp_path / "pwned"
    with pytest.raises(ConfigError, match="is not allowed|does not parse|must be a dict"):
        parse_kwargs("policy_kwargs", text.format(marker=marker))
    assert not marker.exists()


@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_kwargs_escapes_from_the_command_line_and_config_files_are_refused(trainer, tmp_path, capsys):
    marker = tmp_path / "pwned"
    escape = f"dict(activation_fn=nn.modules.module.torch.os.system('touch {marker}'))"
    err = refused(
        capsys, trainer.main, [*UAV, "--hyperparams", f"policy_kwargs={escape}", "--log-dir", str(tmp_path)], tmp_path
    )
    assert "is not allowed" in err
    config = tmp_path / "evil.yml"
    config.write_text(
        yaml.safe_dump({"UAVGrid-v0": {"policy": "MultiInputPolicy", "n_timesteps": 10, "policy_kwargs": escape}})
    )
    refused(capsys, trainer.main, [*UAV, "--config", str(config), "--log-dir", str(tmp_path)], tmp_path)
    assert not marker.exists()


def test_the_rl_zoos_own_kwargs_strings_still_load():
    import importlib.util

    # Found without importing rl_zoo3: its import patches gymnasium's TimeLimit for the whole process.
    folder = Path(importlib.util.find_spec("rl_zoo3").submodule_search_locations[0]) / "hyperparams"
    parsed = 0
    for path in folder.glob("*.yml"):
        for section in yaml.safe_load(path.read_text()).values():
            for key, value in (section or {}).items():
                if key.endswith("_kwargs") and isinstance(value, str) and key != "normalize_kwargs":
                    assert isinstance(parse_kwargs(key, value), dict), (path.name, key, value)
                    parsed += 1
    assert parsed > 50
    assert parse_kwargs("policy_kwargs", "dict(net_arch=[256, 256], activation_fn=nn.ReLU)")["activation_fn"] is torch.nn.ReLU


# -- 2. resume is exact --------------------------------------------------------------------------


@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_resume_takes_env_and_envs_from_the_run_and_refuses_contradictions(trainer, sb3_run, custom_run, tmp_path, capsys):
    run = sb3_run if trainer is sb3_train else custom_run
    out = tmp_path / "out"
    for flags, message in [
        (["--env", "BallDuel-v0"], "--env 'BallDuel-v0' contradicts the resumed run's 'UAVGrid-v0'"),
        (["--n-envs", "4"], "--n-envs 4 contradicts the resumed run's 2"),
        (["--vec-env", "dummy"], "--vec-env 'dummy' contradicts the resumed run's 'native'"),
        (["--env-kwargs", "n_ues=3"], "--env-kwargs cannot change"),
        (["--hyperparams", "batch_size=64"], "batch_size cannot change in a resumed run; these can: learning_rate"),
    ]:
        err = refused(capsys, trainer.main, ["--resume", str(run), "--timesteps", "40", "--log-dir", str(out), *flags], out)
        assert message in err, err
    # The README's command: no --env, no --n-envs; the run's are taken.
    argv = [
        "--resume",
        str(run),
        "--timesteps",
        "40",
        "--log-dir",
        str(out),
        "--no-progress",
        "--hyperparams",
        "learning_rate=3.0e-4",
    ]
    assert run_cli(trainer.main, argv) == 0
    resumed = next(out.glob("*/UAVGrid-v0_1"))
    config = read_config(resumed)
    assert config["hyperparams"]["n_envs"] == 2 and config["hyperparams"]["env_kwargs"] == {"max_episode_steps": 50}
    assert config["hyperparams"]["learning_rate"] == 3e-4, "config.yml says what ran"
    assert not any(out.glob("*/BallDuel-v0_*"))


def test_sb3_resume_keeps_learning_and_checkpoints_on_the_grid(sb3_run, tmp_path, capsys):
    from agents.sb3.sb3_dqn import read_model_file

    out = tmp_path / "out"
    argv = ["--resume", str(sb3_run), "--timesteps", "250", "--save-freq", "100", "--log-dir", str(out), "--no-progress"]
    assert run_cli(sb3_train.main, argv) == 0
    resumed = out / "dqn" / "UAVGrid-v0_1"
    assert sorted(p.name for p in (resumed / "checkpoints").iterdir()) == ["model_400_steps.zip", "model_500_steps.zip"]
    before, after = read_model_file(sb3_run / "final_model.zip", "cpu"), read_model_file(resumed / "final_model.zip", "cpu")
    assert before[0]["num_timesteps"] == 300 and after[0]["num_timesteps"] == 550
    moved = [not torch.equal(a, b) for a, b in zip(before[1]["policy"].values(), after[1]["policy"].values())]
    assert any(moved), "a resumed lin_ schedule still learns"
    assert "with its replay buffer (300 transitions)" in capsys.readouterr().err


def test_resume_ignores_temporary_files_and_picks_the_most_steps(custom_run, tmp_path):
    run = copy_run(custom_run, tmp_path)
    (run / "final_model.pt").unlink()
    checkpoints = run / "checkpoints"
    (checkpoints / ".model_900_steps.pt.tmp-99999999.pt").write_bytes(b"half written")
    newest = checkpoints / "model_100_steps.pt"
    os.utime(newest, (time.time() + 100, time.time() + 100))  # newest by time, fewest steps
    assert latest_model(run, (".pt",)) == checkpoints / "model_300_steps.pt"
    (run / "interrupted_model.pt").write_bytes((checkpoints / "model_200_steps.pt").read_bytes())
    assert latest_model(run, (".pt",)) == run / "interrupted_model.pt"


def test_writing_into_a_folder_removes_temporaries_of_dead_processes_only(tmp_path):
    dead = tmp_path / ".model_5_steps.pt.tmp-99999999.pt"
    alive = tmp_path / f".model_6_steps.pt.tmp-{os.getppid()}.pt"
    for path in (dead, alive):
        path.write_bytes(b"x")
    with atomic_path(tmp_path / "model_7_steps.pt") as tmp:
        tmp.write_bytes(b"model")
    assert not dead.exists() and alive.exists() and (tmp_path / "model_7_steps.pt").read_bytes() == b"model"


@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_a_resume_that_expected_a_buffer_and_finds_none_says_so(trainer, sb3_run, custom_run, tmp_path, capsys):
    run = copy_run(sb3_run if trainer is sb3_train else custom_run, tmp_path)
    (run / "replay_buffer.npz").unlink()
    assert (
        run_cli(trainer.main, ["--resume", str(run), "--timesteps", "40", "--log-dir", str(tmp_path / "out"), "--no-progress"])
        == 0
    )
    assert "asked for its replay buffer but none was saved: it starts empty" in capsys.readouterr().err


def test_a_step_cut_short_between_the_workers_answers_does_not_hang_the_close():
    """Ctrl-C in the trainer after one worker's answer to a step was read and before the other's:
    an orderly close would wait for the first one's answer again, for ever."""
    import threading

    from stable_baselines3.common.vec_env import SubprocVecEnv, VecFrameStack

    from agents.environments.envs import make_env
    from agents.trainer.training import close_quietly

    env = VecFrameStack(SubprocVecEnv([functools.partial(make_env, "BallDuel-v0", True, obs_type="state")] * 2), 2)
    env.reset()
    inner = env.venv
    inner.step_async(np.zeros(2, dtype=np.int64))
    inner.remotes[0].recv()  # the interrupted step_wait read this answer, not the second
    closing = threading.Thread(target=close_quietly, args=([env], True), daemon=True)
    closing.start()
    closing.join(timeout=60)
    assert not closing.is_alive(), "closing the interrupted env hung"
    assert not any(process.is_alive() for process in inner.processes)


def finished_an_episode(log_dir: Path) -> bool:
    """A worker's monitor file under ``log_dir`` holds an episode (its two header lines and a row)."""
    return any(len(path.read_text().splitlines()) > 2 for path in log_dir.glob("*/UAVGrid-v0_1/*.monitor.csv"))


@pytest.mark.slow
@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_ctrl_c_to_the_process_group_saves_an_interrupted_model_to_resume_from(trainer, tmp_path):
    name = trainer.__name__
    command = [
        sys.executable,
        "-m",
        name,
        *UAV[:-2],
        "--vec-env",
        "subproc",
        "--timesteps",
        "1000000",
        "--log-dir",
        str(tmp_path),
    ]
    command += ["--hyperparams", "buffer_size=2000", "learning_starts=200", "--save-replay-buffer", "--no-progress"]
    # A shell that starts the tests in the background (`pytest &`, nohup) leaves SIGINT ignored in
    # its children; a terminal's trainer has it at the default.
    restore_sigint = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=restore_sigint
    )
    try:
        # Learning has started once a worker's monitor has a finished episode (300 steps, past
        # learning_starts): a slow machine can take longer than any fixed wait to get there.
        deadline = time.time() + 120
        while not finished_an_episode(tmp_path) and time.time() < deadline:
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the trainer and its workers
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:  # never leave a trainer running after a failed test
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted: model saved to" in err
    run = next(tmp_path.glob("*/UAVGrid-v0_1"))
    model = next(run.glob("interrupted_model.*"))
    assert str(model) in err and (run / "replay_buffer.npz").is_file() and not (run / "summary.yml").exists()
    assert (
        run_cli(trainer.main, ["--resume", str(run), "--timesteps", "40", "--log-dir", str(tmp_path / "out"), "--no-progress"])
        == 0
    )
    assert read_config(next((tmp_path / "out").glob("*/UAVGrid-v0_1")))["resumed_from"] == str(model)


# -- 3. bad input fails before any run folder; bugs are not bad input -----------------------------------


BAD_INPUT = [
    (["--hyperparams", "learning_rate=-1.0"], "learning_rate=-1.0 must be a number > 0"),
    (["--hyperparams", "learning_rate=1e999"], "learning_rate=inf must be a number > 0"),
    (["--hyperparams", "n_envs=0"], "n_envs=0 must be an integer in [1, 65536]"),
    (["--hyperparams", "buffer_size=1e11"], "buffer_size=100000000000 needs"),
    (["--hyperparams", "buffer_size=-1"], "buffer_size=-1 must be an integer >= 1"),
    (["--hyperparams", "buffer_size=0"], "buffer_size=0 must be an integer >= 1"),
    (["--hyperparams", "batch_size=0"], "batch_size=0 must be an integer >= 1"),
    (["--hyperparams", "gamma=2.0"], "gamma=2.0 must be a number in [0, 1]"),
    (["--hyperparams", "exploration_fraction=-1"], "exploration_fraction=-1 must be a number in [0, 1]"),
    (["--hyperparams", "gradient_steps=0"], "gradient_steps=0 must be an integer >= 1, or -1"),
    (["--hyperparams", "target_update_interval=0"], "target_update_interval=0 must be an integer >= 1"),
    (["--hyperparams", "train_freq=0"], "train_freq=0 must be an integer >= 1"),
    (["--hyperparams", "policy_kwargs=dict(net_arch=[0])"], "net_arch must be a list of layer widths >= 1, got [0]"),
    (["--hyperparams", "policy_kwargs=dict(net_arch=[64"], "does not parse"),
    (["--hyperparams", "policy=FooPolicy"], "unknown policy 'FooPolicy'; valid: CnnPolicy, MlpPolicy, MultiInputPolicy"),
    (["--hyperparams", "policy=CnnPolicy"], "policy 'CnnPolicy' does not fit the observation space"),
    (["--env-kwargs", "obs_type=image"], "policy 'MultiInputPolicy' does not fit"),
    (["--env-kwargs", "class_weights=(1e999,1,1)"], "class_weights must be 3 finite positive numbers"),
    (["--env-kwargs", "random_layout=maybe"], "random_layout must be True or False, got 'maybe'"),
    (["--env-kwargs", "obs_size=48"], "obs_size=48 applies to obs_type='image' only"),
    (
        ["--env-kwargs", "obs_type=image", "pixel_dtype=float32", "--hyperparams", "policy=CnnPolicy", "buffer_size=100"],
        "leave pixel_dtype",
    ),
    (["--seed", "-1"], "--seed must be in 0..4294967295, got -1"),
    (["--seed", "1e20"], "argument --seed: invalid int value: '1e20'"),
    (["--seed", str(2**64)], "--seed must be in 0..4294967295"),
    (["--n-envs", "0"], "--n-envs must be in 1..65536, got 0"),
    (["--timesteps", str(2**53 + 1)], f"--timesteps must be in 1..{2**53 - 1}, got {2**53 + 1}"),
    (["--env-kwargs", "render_mode=human"], "--env-kwargs render_mode='human': a run trains unrendered"),
    (["--log-dir", ""], "--log-dir '': name a folder"),
]


@pytest.mark.parametrize("argv,message", BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_bad_values_fail_before_any_run_folder(trainer, argv, message, tmp_path, capsys):
    log_dir = tmp_path / "runs"
    assert message in refused(capsys, trainer.main, [*UAV, "--log-dir", str(log_dir), *argv], tmp_path)
    assert not log_dir.exists(), "nothing left behind: no algorithm folder either"


def test_a_config_that_trains_zero_steps_is_refused(tmp_path, capsys):
    config = tmp_path / "zero.yml"
    config.write_text("UAVGrid-v0:\n  policy: MultiInputPolicy\n  n_timesteps: 0\n")
    for trainer in TRAINERS:
        assert "n_timesteps=0 must be an integer >= 1" in refused(
            capsys, trainer.main, [*UAV, "--config", str(config), "--log-dir", str(tmp_path)], tmp_path
        )


@pytest.mark.parametrize("trainer", TRAINERS, ids=TRAINER_IDS)
def test_unusable_log_dirs_fail_before_anything_is_written(trainer, tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("")
    (tmp_path / "holder").mkdir()
    algo = "dqn" if trainer is sb3_train else "custom"
    (tmp_path / "holder" / algo).write_text("")
    cases = [
        (str(a_file), "exists and is not a folder"),
        (str(a_file / "under"), "cannot write in"),
        ("/dev/full", "exists and is not a folder"),
        ("/proc/ballenvs", "cannot write in"),
        (str(tmp_path / "holder"), "exists and is not a folder"),
    ]
    for log_dir, message in cases:
        assert message in refused(capsys, trainer.main, [*UAV, "--log-dir", log_dir])


def test_the_ring_radius_is_bounded(tmp_path, capsys):
    argv = ["--env", "BallDuel-v0", "--env-kwargs", "ring_radius=1e300", "--log-dir", str(tmp_path)]
    assert "ring_radius must be in [1e-06, 1e+06]" in refused(capsys, custom_train.main, argv, tmp_path)


def test_a_bug_keeps_its_traceback(monkeypatch, tmp_path):
    from agents.algorithms.dqn import DQNAgent

    def broken(self, batch):
        raise ValueError("planted bug")

    monkeypatch.setattr(DQNAgent, "update", broken)
    with pytest.raises(ValueError, match="planted bug"):
        run_cli(custom_train.main, [*UAV, "--timesteps", "300", "--log-dir", str(tmp_path), *TINY])


def test_resuming_a_run_of_another_space_or_algorithm_is_one_line(sb3_run, custom_run, tmp_path, capsys):
    out = tmp_path / "out"
    assert "a dqn run, not custom; python -m agents.train --resume" in refused(
        capsys, custom_train.main, ["--resume", str(sb3_run), "--log-dir", str(out)], out
    )
    run = copy_run(custom_run, tmp_path / "copy")
    config = read_config(run)
    config["hyperparams"]["env_kwargs"] = {"n_ues": 4}
    (run / "config.yml").write_text(yaml.safe_dump(config))
    err = refused(capsys, custom_train.main, ["--resume", str(run), "--log-dir", str(out)], out)
    assert "does not match this env and config" in err


def test_compare_makes_no_folder_for_bad_input(tmp_path, capsys):
    base = ["--env", "UAVGrid-v0", "--timesteps", "6000", "--log-dir", str(tmp_path)]  # past learning_starts
    for argv, message in [
        (["--hyperparams", "gamma=2.0"], "gamma=2.0 must be"),
        (["--n-envs", "0"], "--n-envs must be in 1..65536, got 0"),
        (["--env", "Pong-v5"], "unknown env 'Pong-v5'"),
        (["--seeds", "0"], "--seeds must be in [1, 1,000], got 0"),
    ]:
        assert message in refused(capsys, compare.main, [*base, *argv])
        assert not (tmp_path / "compare").exists() or not any((tmp_path / "compare").iterdir())
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert "exists and is not a folder" in refused(capsys, compare.main, ["--log-dir", str(a_file), "--timesteps", "6000"])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "manifest.json").write_text("{}")
    assert "is not a compare manifest (it lacks env_id" in refused(
        capsys, compare.main, ["--from-runs", str(tmp_path / "empty")]
    )


def test_evaluate_refuses_bad_seeds_configs_and_envs(custom_run, tmp_path, capsys):
    assert "--seed must be in 0.." in refused(capsys, evaluate_main, [str(custom_run), "--seed", "-1"])
    run = copy_run(custom_run, tmp_path)
    for text, message in [
        ("", "is not a run's config"),
        ("algo: [unclosed", "is not valid YAML"),
        (
            "algo: custom\nenv_id: Pong-v5\nseed: 0\nvec_env: native\ntimesteps: 1\nhyperparams: {}\n",
            "env_id 'Pong-v5' is unknown",
        ),
    ]:
        (run / "config.yml").write_text(text)
        assert message in refused(capsys, evaluate_main, [str(run)])
    (run / "config.yml").write_bytes(b"\xff\xfe\x00bad")
    assert "is not UTF-8 text" in refused(capsys, evaluate_main, [str(run)])


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--episodes", "99999999999999"], "--episodes must be in 1..1,000,000, got 99999999999999"),
        (["--episodes", "0"], "--episodes must be in 1..1,000,000, got 0"),
        (["--opponent", ""], "--opponent '': name a built-in player, a model file or a run folder, or all"),
        (["--opponent", "  "], "--opponent '  ': name a built-in player"),
    ],
)
def test_evaluate_refuses_counts_past_memory_and_empty_names_before_playing(custom_run, capsys, flags, message):
    assert message in refused(capsys, evaluate_main, [str(custom_run), *flags])


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--n-envs", "65537"], "--n-envs must be in 1..65536, got 65537"),  # was refused only after training
        (["--opponent", ""], "--opponent: '' names nothing"),  # was read as the flag left out
    ],
)
def test_train_refuses_envs_past_its_bound_and_an_empty_opponent_before_any_folder(tmp_path, capsys, flags, message):
    argv = ["--algo", "custom", "--env", "UAVGrid-v0", "--timesteps", "64", "--log-dir", str(tmp_path), *flags]
    assert message in refused(capsys, custom_train.main, argv, tmp_path)
    assert not list(tmp_path.iterdir())


def test_evaluate_with_a_window_but_no_display_is_refused(custom_run, monkeypatch, capsys):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    assert "--render human needs a display" in refused(capsys, evaluate_main, [str(custom_run), "--render", "human"])


# -- 4. values are parsed properly; 5. errors span one line --------------------------------------------


def test_booleans_parse_as_booleans_and_anything_else_is_refused():
    parsed = parse_overrides(["a=false", "b=True", "c=yes", "d=OFF", "e=0", "f=1"], "--env-kwargs")
    assert parsed == {"a": False, "b": True, "c": True, "d": False, "e": 0, "f": 1}
    import gymnasium as gym

    env = gym.make("UAVGrid-v0", random_layout=parsed["a"], obs_type="image")
    assert env.unwrapped.game.random_layout is False


def test_yaml_errors_undecodable_configs_and_garbage_models_are_one_line(custom_run, tmp_path, capsys):
    broken = tmp_path / "broken.yml"
    broken.write_text("UAVGrid-v0:\n  policy: [MultiInputPolicy\n  n_timesteps: 10\n")
    assert "is not valid YAML at line" in refused(
        capsys, custom_train.main, [*UAV, "--config", str(broken), "--log-dir", str(tmp_path)]
    )
    binary = tmp_path / "binary.yml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xff")
    assert f"config '{binary}' is not UTF-8 text" in refused(capsys, custom_train.main, [*UAV, "--config", str(binary)])
    run = copy_run(custom_run, tmp_path)
    (run / "final_model.pt").write_bytes(b"\x80\x04garbage" * 10)
    err = refused(capsys, evaluate_main, [str(run / "final_model.pt")])
    assert "cannot load checkpoint" in err and "weights_only" not in err.split(":", 2)[-1]
