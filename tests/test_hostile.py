"""Hostile files and values, a table per reader: each is refused with exit status 2, one line on
stderr naming what is wrong, nothing hangs, and no run folder is left behind."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from helpers import TINY, UAV

from agents import compare, custom_train, league, sb3_train, tune
from agents.common.cli import run_cli
from agents.evaluate import main as evaluate_main

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 9)}]\n" for k in range(8)
)
DEEP_YAML = "a: " + "[" * 5000 + "]" * 5000 + "\n"


def refused(capsys, main, argv, folder: Path | None = None) -> str:
    """Exit status 2, one line on stderr, and (given ``folder``) no run folder made in it."""
    before = set(folder.rglob("config.yml")) if folder is not None else set()
    assert run_cli(main, argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    if folder is not None:
        assert set(folder.rglob("config.yml")) == before, "no run folder for a refused input"
    return err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A custom self-play run on BallDuel (snapshots, a replay buffer) and an SB3 run on UAVGrid."""
    folder = tmp_path_factory.mktemp("runs")
    duel = ["--env", "BallDuel-v0", "--opponent", "self", "--env-kwargs", "obs_type=state", "max_episode_steps=60"]
    duel += ["--timesteps", "600", "--eval-freq", "0", "--no-progress", "--save-replay-buffer", "--log-dir", str(folder)]
    duel += ["--hyperparams", "policy=MlpPolicy", "frame_stack=1", "learning_starts=100", "buffer_size=2000"]
    duel += ["self_play=dict(snapshot_steps=200, swap_steps=100)"]
    assert run_cli(custom_train.main, duel) == 0
    uav = [*UAV, "--timesteps", "300", "--log-dir", str(folder), *TINY]
    assert run_cli(sb3_train.main, [*uav, "--eval-freq", "150", "--eval-episodes", "1", "--save-replay-buffer"]) == 0
    return {"custom": folder / "custom" / "BallDuel-v0_1", "dqn": folder / "dqn" / "UAVGrid-v0_1"}


def copy(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / run.parent.name / run.name
    shutil.copytree(run, target)
    return target


# -- a run's config.yml, read by every tool that opens a run --------------------------------------

CONFIGS = [
    ("- a list\n- of things\n", "holds list, not a mapping"),
    ("just a string\n", "holds str, not a mapping"),
    (BILLION_LAUGHS, "aliases are not accepted"),
    (DEEP_YAML, "nesting deeper than"),
    ("env_kwargs_list", "env_kwargs must be a mapping"),
    ("frame_stack=-3", "frame_stack=-3 must be an integer in [1, 64]"),
    ("frame_stack=100000", "frame_stack=100000 must be an integer in [1, 64]"),
    ("obs_size=100000", "obs_size must be an int in [36, 1024], got 100000"),
    ("render_mode=1", "render_mode=1; a run trains unrendered"),
    ("seed=missing", "it lacks seed"),
    ("seed=2**40", "seed must be an integer in [0, 4294967295]"),
    ("seed=true", "seed must be int"),
    ("algo=pong", "algo 'pong' is unknown"),
]


def hostile_config(run: Path, change: str) -> None:
    path = run / "config.yml"
    if "\n" in change:
        path.write_text(change)
        return
    config = yaml.safe_load(path.read_text())
    key, _, value = change.partition("=")
    if change == "env_kwargs_list":
        config["hyperparams"]["env_kwargs"] = ["obs_type", "state"]
    elif key in ("frame_stack",):
        config["hyperparams"][key] = int(value)
    elif key in ("obs_size", "render_mode"):
        config["hyperparams"]["env_kwargs"][key] = int(value)
    elif value == "missing":
        del config[key]
    else:
        config[key] = {"true": True, "2**40": 2**40}.get(value, value)
    path.write_text(yaml.safe_dump(config))


@pytest.mark.parametrize("change,message", CONFIGS, ids=[m for _, m in CONFIGS])
def test_run_configs(runs, tmp_path, capsys, change, message):
    run = copy(runs["custom"], tmp_path)
    hostile_config(run, change)
    assert message in refused(capsys, evaluate_main, [str(run / "final_model.pt"), "--episodes", "1"])
    assert message in refused(capsys, custom_train.main, ["--resume", str(run), "--log-dir", str(tmp_path / "out")], tmp_path)


# -- model files: our checkpoints, SB3 zips, snapshots ---------------------------------------------


def checkpoint_with(run: Path, change) -> Path:
    path = run / "final_model.pt"
    state = torch.load(path, weights_only=True)
    change(state)
    torch.save(state, path)
    return path


CHECKPOINTS = [
    (lambda s: s.update(spec="a string"), "spec must be dict, got str"),
    (lambda s: s.update(spec=[1, 2]), "spec must be dict, got list"),
    (lambda s: s["spec"].update(net_arch=[8]), "holds a network (net_arch [8]"),
    (lambda s: s["progress"].update(num_timesteps=-5), "num_timesteps must be an integer in [0,"),
    (lambda s: s["progress"].update(num_timesteps=2**60), "num_timesteps must be an integer in [0,"),
    (lambda s: s["progress"].update(num_timesteps=True), "num_timesteps must be an integer in [0,"),
    (lambda s: s.update(exploration_rate=7.0), "exploration_rate must be in [0, 1]"),
    (lambda s: s.pop("format"), "is not a custom agent's checkpoint"),
]


@pytest.mark.parametrize("change,message", CHECKPOINTS, ids=[m for _, m in CHECKPOINTS])
def test_checkpoints(runs, tmp_path, capsys, change, message):
    run = copy(runs["custom"], tmp_path)
    path = checkpoint_with(run, change)
    assert message in refused(capsys, evaluate_main, [str(path), "--episodes", "1"])


def rewrite_zip(path: Path, entries: dict[str, bytes], sizes: dict[str, int] | None = None) -> None:
    with zipfile.ZipFile(path) as archive:
        kept = {name: archive.read(name) for name in archive.namelist()}
    kept.update(entries)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in kept.items():
            archive.writestr(name, data)
    for name, size in (sizes or {}).items():  # a header that claims an enormous entry: a zip bomb's
        raw = bytearray(path.read_bytes())
        at = raw.rfind(name.encode()) - 46 + 24  # the central directory's uncompressed size of the entry
        raw[at : at + 4] = size.to_bytes(4, "little")
        path.write_bytes(bytes(raw))


def tensors(value) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


SB3_ZIPS = [
    ({"data": ("[" * 5000 + "]" * 5000).encode()}, None, "JSON nested deeper than"),
    ({"data": b"[1, 2, 3]"}, None, "its data entry is not a mapping"),
    ({"policy.pth": tensors([1, 2, 3])}, None, "its policy.pth"),
    ({"data": json.dumps({"num_timesteps": -4}).encode()}, None, "num_timesteps must be an integer in [0,"),
    ({}, {"policy.pth": 0xFFFFFFF0}, "unpacks to"),
    ({"policy.pth": b"not tensors"}, None, "not a weights-only tensor file"),
]


@pytest.mark.parametrize("entries,sizes,message", SB3_ZIPS, ids=[m for *_, m in SB3_ZIPS])
def test_sb3_zips(runs, tmp_path, capsys, entries, sizes, message):
    run = copy(runs["dqn"], tmp_path)
    rewrite_zip(run / "final_model.zip", entries, sizes)
    assert message in refused(capsys, evaluate_main, [str(run / "final_model.zip"), "--episodes", "1"])


def test_snapshots(runs, tmp_path, capsys):
    run = copy(runs["custom"], tmp_path)
    snapshots = sorted((run / "snapshots").iterdir())
    shutil.copy(snapshots[0], run / "snapshots" / "snapshot_abc_steps.pt")
    err = refused(capsys, league.main, [str(run), "chaser", "--games", "2", "--log-dir", str(tmp_path / "l")])
    assert "is not named as a snapshot" in err
    (run / "snapshots" / "snapshot_abc_steps.pt").unlink()
    state = torch.load(snapshots[0], weights_only=True)
    state["q"] = {name: torch.zeros(3) for name in state["q"]}
    torch.save(state, snapshots[0])
    assert "do not fit the run's network" in refused(capsys, league.main, [str(snapshots[0]), "chaser", "--games", "2"])
    state["steps"] = "many"
    torch.save(state, snapshots[0])
    assert "steps must be an integer" in refused(capsys, league.main, [str(snapshots[0]), "chaser", "--games", "2"])


@pytest.mark.parametrize("text", ["- 1\n- 2\n", "a string\n", "steps: -1\nseconds: 1\ntotal_steps: 3\n"])
def test_summaries(runs, tmp_path, capsys, text):
    run = copy(runs["custom"], tmp_path)
    (run / "summary.yml").write_text(text)
    err = refused(capsys, league.main, [str(run), "chaser", "--games", "2", "--log-dir", str(tmp_path / "l")])
    assert "summary" in err


# -- replay buffers, evaluations, configs, studies -------------------------------------------------


@pytest.mark.parametrize("trainer", ["custom", "dqn"])
def test_replay_buffers_whose_counters_lie(runs, tmp_path, capsys, trainer):
    run = copy(runs[trainer], tmp_path)
    with np.load(run / "replay_buffer.npz") as data:
        arrays = dict(data)
    counter = "size" if trainer == "custom" else "pos"
    arrays[counter] = np.array(10**9)
    np.savez(run / "replay_buffer.npz", **arrays)
    main = custom_train.main if trainer == "custom" else sb3_train.main
    out = tmp_path / "out"
    err = refused(capsys, main, ["--resume", str(run), "--timesteps", "10", "--log-dir", str(out)], out)
    assert f"{counter} must be an integer in [0," in err


@pytest.mark.parametrize("arrays", [{}, {"timesteps": np.array([1, 2]), "results": np.array([None, None], dtype=object)}])
def test_evaluations(runs, tmp_path, capsys, arrays):
    run = copy(runs["dqn"], tmp_path)
    np.savez(run / "evaluations.npz", **arrays)
    manifest = {"env_id": "UAVGrid-v0", "env_kwargs": {}, "timesteps": 300, "seeds": 1, "eval_freq": 150}
    manifest |= {"eval_episodes": 1, "score_episodes": 1, "hardware": "x", "command": "x", "baselines": {"greedy": 1.0}}
    manifest |= {"heuristic": "greedy", "runs": {"SB3 DQN": [str(run)]}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    err = refused(capsys, compare.main, ["--from-runs", str(tmp_path)])
    assert "evaluations" in err


@pytest.mark.parametrize("text,message", [(BILLION_LAUGHS, "aliases are not accepted"), (DEEP_YAML, "nesting deeper")])
def test_config_files(tmp_path, capsys, text, message):
    bad = tmp_path / "bad.yml"
    bad.write_text(text)
    err = refused(capsys, custom_train.main, ["--config", str(bad), "--log-dir", str(tmp_path / "out")], tmp_path)
    assert message in err


STUDIES = [
    (["--study-name", "../../x"], "a study name is 1 to 100 letters"),
    (["--study-name", "/abs/path"], "a study name is 1 to 100 letters"),
    (["--study-name", ".."], "a study name is 1 to 100 letters"),
    (["--study-name", ""], "a study name is 1 to 100 letters"),
    (["--study-name", "x" * 300], "a study name is 1 to 100 letters"),
    (["--storage", "ftp://host/db"], "not a study storage"),
    (["--seeds", "2", "--from-trial", "-1"], "--from-trial must be a trial number >= 0"),
]


@pytest.mark.parametrize("argv,message", STUDIES, ids=[m + str(i) for i, (_, m) in enumerate(STUDIES)])
def test_study_names_and_storages(tmp_path, capsys, argv, message):
    base = ["--env", "UAVGrid-v0", "--trials", "1", "--timesteps", "200", "--log-dir", str(tmp_path)]
    assert message in refused(capsys, tune.main, [*base, *argv])
    assert not [p for p in tmp_path.rglob("*") if p.is_file()], "nothing written"


def test_search_spaces_and_journals(tmp_path, capsys):
    space = tmp_path / "space.yml"
    space.write_text("learning_rate: {type: float, low: 'a', high: 'b'}\n")
    base = ["--env", "UAVGrid-v0", "--trials", "1", "--timesteps", "200", "--log-dir", str(tmp_path / "t")]
    assert "is not {type: float|int, low, high" in refused(capsys, tune.main, [*base, "--search-space", str(space)])
    journal = tmp_path / "t" / "garbage" / "journal.log"
    journal.parent.mkdir(parents=True)
    journal.write_text("this is not a journal\n{]\n")
    err = refused(capsys, tune.main, ["--report", "--study-name", "garbage", "--log-dir", str(tmp_path / "t")])
    assert "is not an Optuna journal" in err


def test_env_options_from_gym_make():
    import gymnasium as gym

    with pytest.raises(ValueError, match="unknown render_mode 1; valid: None, 'human', 'rgb_array'"):
        gym.make("BallDuel-v0", render_mode=1)
