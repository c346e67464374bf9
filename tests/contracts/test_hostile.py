"""Hostile files and values, a table per reader: each is refused with exit status 2, one line on
stderr naming what is wrong, nothing hangs, and no run folder is left behind."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from agents import compare, custom_train, league, sb3_train, tune
from agents.evaluate import main as evaluate_main
from agents.session.cli import run_cli
from tests.helpers import TINY, UAV, copy_run, refused

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 9)}]\n" for k in range(8)
)
DEEP_YAML = "a: " + "[" * 5000 + "]" * 5000 + "\n"


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
    run = copy_run(runs["custom"], tmp_path)
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
    run = copy_run(runs["custom"], tmp_path)
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
    run = copy_run(runs["dqn"], tmp_path)
    rewrite_zip(run / "final_model.zip", entries, sizes)
    assert message in refused(capsys, evaluate_main, [str(run / "final_model.zip"), "--episodes", "1"])


def test_snapshots(runs, tmp_path, capsys):
    run = copy_run(runs["custom"], tmp_path)
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
    run = copy_run(runs["custom"], tmp_path)
    (run / "summary.yml").write_text(text)
    err = refused(capsys, league.main, [str(run), "chaser", "--games", "2", "--log-dir", str(tmp_path / "l")])
    assert "summary" in err


# -- replay buffers, evaluations, configs, studies -------------------------------------------------


@pytest.mark.parametrize("trainer", ["custom", "dqn"])
def test_replay_buffers_whose_counters_lie(runs, tmp_path, capsys, trainer):
    run = copy_run(runs[trainer], tmp_path)
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
    run = copy_run(runs["dqn"], tmp_path)
    np.savez(run / "evaluations.npz", **arrays)
    manifest = {"env_id": "UAVGrid-v0", "env_kwargs": {}, "timesteps": 300, "seeds": 1, "eval_freq": 150}
    manifest |= {"eval_episodes": 1, "score_episodes": 1, "hardware": "x", "command": "x", "baselines": {"greedy": 1.0}}
    manifest |= {"heuristic": "greedy", "runs": {"SB3 DQN": [str(run)]}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    err = refused(capsys, compare.main, ["--from-runs", str(tmp_path)])
    assert "evaluations" in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"env_id": "Nope-v0"}, "env_id 'Nope-v0' is none of the envs"),
        ({"env_id": ["UAVGrid-v0"]}, "env_id ['UAVGrid-v0'] is none of the envs"),
        ({"heuristic": "nobody"}, "heuristic 'nobody' is none of its baselines (greedy)"),
        ({"baselines": {"greedy": "high"}}, "baseline greedy must be a finite number"),
        ({"baselines": ["greedy"]}, "baselines must map each reference player"),
        ({"timesteps": -1}, "timesteps must be an integer in [1,"),
        ({"eval_freq": {"SB3 DQN": 0.5}}, "eval_freq must be an integer in [1,"),
    ],
)
def test_a_tampered_compare_manifest_is_refused_in_one_line(runs, tmp_path, capsys, change, message):
    run = copy_run(runs["dqn"], tmp_path)
    manifest = {"env_id": "UAVGrid-v0", "env_kwargs": {}, "timesteps": 300, "seeds": 1, "eval_freq": 150}
    manifest |= {"eval_episodes": 1, "score_episodes": 1, "hardware": "x", "command": "x", "baselines": {"greedy": 1.0}}
    manifest |= {"heuristic": "greedy", "runs": {"SB3 DQN": [str(run)]}} | change
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert message in refused(capsys, compare.main, ["--from-runs", str(tmp_path)])
    assert not (tmp_path / "report.md").exists()


def test_score_episodes_are_bounded_on_the_command_line_and_in_a_manifest(runs, tmp_path, capsys):
    run = copy_run(runs["dqn"], tmp_path)
    manifest = {"env_id": "UAVGrid-v0", "env_kwargs": {}, "timesteps": 300, "seeds": 1, "eval_freq": 150}
    manifest |= {"eval_episodes": 1, "score_episodes": 10**12, "hardware": "x", "command": "x", "baselines": {"greedy": 1.0}}
    manifest |= {"heuristic": "greedy", "runs": {"SB3 DQN": [str(run)]}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert "score_episodes must be an integer in [1, 100000]" in refused(capsys, compare.main, ["--from-runs", str(tmp_path)])
    assert not (tmp_path / "report.md").exists()
    err = refused(capsys, compare.main, ["--score-episodes", str(10**12), "--log-dir", str(tmp_path / "out")])
    assert "--score-episodes must be in [1, 100,000]" in err and not (tmp_path / "out").exists()


def test_an_agent_named_twice_is_refused_before_any_run_as_a_league_refuses_a_player_twice(tmp_path, capsys):
    # Before, compare kept one of the two and trained a comparison of a single agent.
    err = refused(capsys, compare.main, ["--agents", "custom", "pqn", "custom", "--log-dir", str(tmp_path / "out")])
    assert "--agents must differ; named twice: ['custom']" in err and not (tmp_path / "out").exists()
    err = refused(capsys, league.main, ["chaser", "pusher", "chaser", "--games", "2", "--env", "BallSumo-v0"])
    assert "players must differ; named twice: ['chaser']" in err


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
    base += ["--hyperparams", "learning_starts=100"]  # a budget that trains, so that only argv is wrong
    assert message in refused(capsys, tune.main, [*argv, *base])
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


# -- the champion: its export, its file, and the files commands write at their end ------------------


def _run_command(argv: list[str]) -> subprocess.CompletedProcess:
    """A command line as a real process, bounded in time: a hang fails the test instead of the suite."""
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=120)


def _refused_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.mark.slow  # real processes or a training run
def test_export_asks_before_replacing_the_packages_champion(sumo_run):
    from ballenvs.duel import champion

    shipped = Path(champion.__file__).parent / champion.WEIGHTS["champion"]
    before = shipped.read_bytes()
    assert "--out FILE.npz, or --force" in _refused_line(_run_command(["agents.export_champion", str(sumo_run)]))
    assert shipped.read_bytes() == before


def _special_out(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        os.mkfifo(tmp_path / "out.npz")
        return tmp_path / "out.npz"
    if kind == "folder":
        (tmp_path / "out.npz").mkdir()
        return tmp_path / "out.npz"
    if kind == "under a file":
        (tmp_path / "file").write_text("x")
        return tmp_path / "file" / "out.npz"
    if kind == "device":  # a link to one, so that the name ends as a champion's does
        (tmp_path / "out.npz").symlink_to("/dev/full")
        return tmp_path / "out.npz"
    return {"proc": Path("/proc/out.npz"), "suffix": tmp_path / "out.txt"}[kind]


OUT_PATHS = [
    ("fifo", "exists and is not a regular file"),
    ("device", "exists and is not a regular file"),
    ("folder", "exists and is not a regular file"),
    ("under a file", "no folder"),
    ("proc", "cannot write in '/proc'"),
    ("suffix", "the file must end in .npz"),
]


@pytest.mark.parametrize("kind,message", OUT_PATHS, ids=[k for k, _ in OUT_PATHS])
@pytest.mark.slow  # real processes or a training run
def test_export_refuses_an_out_path_it_cannot_replace_before_reading_the_model(sumo_run, tmp_path, kind, message):
    out = _special_out(tmp_path, kind)
    before = sorted(tmp_path.rglob("*"))
    assert message in _refused_line(_run_command(["agents.export_champion", str(sumo_run), "--out", str(out)]))
    assert sorted(tmp_path.rglob("*")) == before
    assert Path("/dev/full").is_char_device(), "a device is never replaced by a regular file"


def _export_a_changed_run(sumo_run: Path, tmp_path: Path, change) -> str:
    run = copy_run(sumo_run, tmp_path)
    change(run)
    out = tmp_path / "champion.npz"
    line = _refused_line(_run_command(["agents.export_champion", str(run), "--out", str(out)]))
    assert not out.exists()
    return line


def _tamper_hyperparams(run: Path, **values) -> None:
    config = yaml.safe_load((run / "config.yml").read_text())
    config["hyperparams"].update(values)
    (run / "config.yml").write_text(yaml.safe_dump(config))


def _nan_weights(run: Path) -> None:
    checkpoint_with(run, lambda state: state["agent"]["q"]["head.0.weight"].fill_(float("nan")))


EXPORTS = [
    (lambda run: (run / "config.yml").unlink(), "config.yml' not found"),
    (lambda run: _tamper_hyperparams(run, policy_kwargs="dict(net_arch=[32])"), "holds a network (net_arch [16]"),
    (_nan_weights, "agent q head.0.weight holds NaN or infinite values"),  # the checkpoint's reader refuses it first
]


@pytest.mark.parametrize("change,message", EXPORTS, ids=[m for _, m in EXPORTS])
@pytest.mark.slow  # real processes or a training run
def test_export_checks_the_run_and_its_weights_before_writing(sumo_run, tmp_path, change, message):
    assert message in _export_a_changed_run(sumo_run, tmp_path, change)


def _champion_file(path: Path, layers: list[tuple[np.ndarray, np.ndarray]], count: int | None = None) -> Path:
    arrays = {"layers": np.array(len(layers) if count is None else count)}
    for k, (weight, bias) in enumerate(layers):
        arrays |= {f"weight_{k}": weight, f"bias_{k}": bias}
    np.savez(path, **arrays)
    return path


def _good_layers() -> list[tuple[np.ndarray, np.ndarray]]:
    from ballenvs.duel.champion import ACTIONS, FEATURES

    rng = np.random.default_rng(0)
    return [(rng.normal(size=(8, FEATURES)).astype(np.float32), np.zeros(8, np.float32)),
            (rng.normal(size=(ACTIONS, 8)).astype(np.float32), np.zeros(ACTIONS, np.float32))]  # fmt: skip


def _false_header(path: Path) -> Path:
    """A 100-byte .npz whose one array's header claims 37 GiB."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (10_000, 1_000_000)})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("layers.npy", header.getvalue())
    return path


CHAMPION_FILES = [
    (lambda p: p, "not found"),
    (lambda p: p.write_bytes(b"") or p, "not an .npz of plain arrays"),
    (lambda p: _champion_file(p, _good_layers(), count=3), "it has no array 'weight_2'"),
    (lambda p: _champion_file(p, _good_layers(), count=0), "'layers' must be a whole number in 1..16"),
    (lambda p: _champion_file(p, _good_layers()[::-1]), "layer 0 has weight (9, 8)"),
    (
        lambda p: _champion_file(p, [(w[:3], b[:3]) if k else (w, b) for k, (w, b) in enumerate(_good_layers())]),
        "the last layer gives 3 values; a champion chooses among 9 actions",
    ),  # fmt: skip
    (lambda p: _champion_file(p, [(w * np.nan, b) for w, b in _good_layers()]), "array 'weight_0' holds NaN or infinite"),
    (lambda p: _champion_file(p, [(w, b + np.inf) for w, b in _good_layers()]), "array 'bias_0' holds NaN or infinite"),
    (lambda p: _champion_file(p, [(w.astype(str), b) for w, b in _good_layers()]), "array 'weight_0' is <U"),
    (_false_header, "claims 40,000,000,000 bytes, more than the file holds"),
]


@pytest.mark.parametrize("make,message", CHAMPION_FILES, ids=[m for _, m in CHAMPION_FILES])
def test_a_champion_file_is_read_through_the_checks(tmp_path, make, message):
    from ballenvs.duel.champion import read_champion
    from ballenvs.npz import NpzError

    path = make(tmp_path / "champion.npz")
    with pytest.raises(NpzError, match="champion file") as refusal:
        read_champion(path)
    assert message in str(refusal.value) and "\n" not in str(refusal.value)


@pytest.mark.parametrize("command", ["league", "record"])
def test_every_command_that_plays_the_champion_refuses_a_damaged_file_in_one_line(command, tmp_path, monkeypatch, capsys):
    import importlib

    from ballenvs.duel import champion
    from tests.helpers import refused

    damaged = tmp_path / "champion.npz"
    damaged.write_bytes(b"garbage")
    monkeypatch.setattr(champion, "load_weights", lambda name="champion": champion.read_champion(damaged))
    argv = {
        "league": ["random", "champion", "--env", "BallSumo-v0", "--games", "2", "--log-dir", str(tmp_path / "runs")],
        "record": ["champion", "--episodes", "1", "--data-path", str(tmp_path / "data")],
    }[command]
    err = refused(capsys, importlib.import_module(f"agents.{command}").main, argv)
    # The league names a built-in alias with the version it plays; record as it was given.
    assert (
        f"player champion{' (champion-v3)' if command == 'league' else ''}: cannot load champion file {str(damaged)!r}" in err
    )
    assert not (tmp_path / "runs").exists() and not (tmp_path / "data").exists()


def test_a_good_champion_file_reads_back_as_written(tmp_path):
    from ballenvs.duel.champion import read_champion

    layers = _good_layers()
    read = read_champion(_champion_file(tmp_path / "champion.npz", layers))
    assert all(np.array_equal(a, b) and np.array_equal(c, d) for (a, c), (b, d) in zip(read, layers))


@pytest.mark.parametrize("kind", ["fifo", "folder", "under a file", "proc"])
@pytest.mark.slow  # real processes or a training run
def test_a_video_path_is_checked_before_any_game_is_played(tmp_path, kind):
    out = _special_out(tmp_path, kind).with_suffix(".mp4")
    if kind in ("fifo", "folder"):
        out = tmp_path / f"{kind}.mp4"
        os.mkfifo(out) if kind == "fifo" else out.mkdir()
    before = sorted(tmp_path.rglob("*"))
    line = _refused_line(_run_command(["agents.league", "chaser", "pusher", "--video", str(out), "--log-dir", str(tmp_path)]))
    assert line.startswith(f"error: --video {str(out)!r}")
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.slow  # real processes or a training run
def test_an_empty_video_path_is_refused_not_ignored(tmp_path):
    line = _refused_line(_run_command(["agents.league", "chaser", "pusher", "--video", "", "--log-dir", str(tmp_path)]))
    assert line == "error: --video '': the file must end in .mp4 or .gif" and not (tmp_path / "league").exists()


# -- round three: what hung, what passed a traceback through, what was accepted ---------------------


@pytest.mark.slow  # real processes or a training run
def test_a_fifo_where_a_config_should_be_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "config.yml"
    os.mkfifo(fifo)
    line = _refused_line(_run_command(["agents.sb3_train", "--config", str(fifo), "--log-dir", str(tmp_path / "runs")]))
    assert "is not a regular file" in line and not (tmp_path / "runs").exists()


LOADED_NETWORKS = [
    ("dqn", "dict(net_arch=[100000000000])", "GiB of memory"),
    ("custom", "dict(net_arch=[100000000000])", "GiB of memory"),
    ("dqn", "dict(net_arch=[16], optimizer_kwargs=dict(bogus=1))", "bogus not taken by Adam"),
    ("dqn", "dict(net_arch=[16], activation_fn=th.optim.Adam)", "is not an activation"),
]


@pytest.mark.parametrize("trainer,policy_kwargs,message", LOADED_NETWORKS, ids=[f"{a}-{m}" for a, _, m in LOADED_NETWORKS])
def test_a_run_config_is_checked_and_priced_before_its_network_is_built(
    runs, tmp_path, capsys, trainer, policy_kwargs, message
):
    """The trainers' checks hold when a tool loads a run: evaluate, league and --opponent build
    the network a run's config.yml names, so a tampered one is refused before it is allocated."""
    run = copy_run(runs[trainer], tmp_path)
    _tamper_hyperparams(run, policy_kwargs=policy_kwargs)
    assert message in refused(capsys, evaluate_main, [str(run), "--episodes", "1"])


@pytest.mark.slow  # real processes or a training run
def test_a_zoo_run_folders_network_is_priced_before_it_is_built(runs, tmp_path):
    zoo = tmp_path / "zoo"
    shutil.copytree(runs["dqn"] / "UAVGrid-v0", zoo / "UAVGrid-v0")
    shutil.copy(runs["dqn"] / "UAVGrid-v0.zip", zoo)
    config = zoo / "UAVGrid-v0" / "config.yml"
    text = config.read_text()
    assert "net_arch=[256, 256]" in text, text
    config.write_text(text.replace("net_arch=[256, 256]", "net_arch=[100000000000]"))
    assert "GiB of memory" in _refused_line(_run_command(["agents.evaluate", str(zoo), "--episodes", "1"]))


@pytest.mark.slow  # real processes or a training run
def test_a_zoo_run_folder_whose_config_is_a_fifo_does_not_hang_evaluate(runs, tmp_path):
    zoo = tmp_path / "zoo"  # the RL Zoo's layout alone: <env>.zip and <env>/ with its config.yml a FIFO
    (zoo / "UAVGrid-v0").mkdir(parents=True)
    shutil.copy(runs["dqn"] / "UAVGrid-v0.zip", zoo)
    shutil.copy(runs["dqn"] / "UAVGrid-v0" / "args.yml", zoo / "UAVGrid-v0")
    os.mkfifo(zoo / "UAVGrid-v0" / "config.yml")
    assert "is not a regular file" in _refused_line(_run_command(["agents.evaluate", str(zoo), "--episodes", "1"]))


KWARGS = [
    ("policy_kwargs=dict(net_arch={[1]: 2})", "a dict's keys must be numbers or strings"),
    ("policy_kwargs=dict(net_arch=[" + "-" * 100_000 + "1])", "at most 10,000 are read"),
    ("policy_kwargs=dict(net_arch=[" + "-" * 5_000 + "1])", "nested too deeply to read"),
]


@pytest.mark.parametrize("override,message", KWARGS, ids=[m for _, m in KWARGS])
def test_kwargs_strings_past_the_parsers_limits(tmp_path, capsys, override, message):
    argv = [*UAV, "--log-dir", str(tmp_path), "--hyperparams", override]
    assert message in refused(capsys, custom_train.main, argv, tmp_path)


def test_a_study_name_with_a_trailing_newline_is_refused(tmp_path, capsys):
    assert "a study name is 1 to 100 letters" in refused(
        capsys, tune.main, ["--study-name", "abc\n", "--log-dir", str(tmp_path)]
    )
    assert not any(tmp_path.iterdir())


def test_a_league_with_bad_game_options_is_one_line(tmp_path, capsys):
    argv = ["chaser", "pusher", "--env", "BallSumo-v0", "--env-kwargs", "game_steps=0", "--log-dir", str(tmp_path)]
    assert "game_steps must be an int in [1, " in refused(capsys, league.main, argv)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("action", [9, -1, float("nan"), 1.0, None])
def test_the_aec_face_refuses_a_bad_action_when_it_is_given(action):
    from ballenvs.duel.pettingzoo import env

    game = env()
    game.reset(seed=0)
    with pytest.raises(ValueError, match="invalid action"):
        game.step(action)


def test_a_policy_switch_that_is_not_a_bool_is_refused(tmp_path, capsys):
    argv = [*UAV, "--log-dir", str(tmp_path), "--hyperparams", "policy_kwargs=dict(normalize_images='no')"]
    assert "normalize_images must be True or False, got 'no'" in refused(capsys, sb3_train.main, argv, tmp_path)


def test_a_search_spaces_log_flag_that_is_not_a_bool_is_refused():
    from agents.common.configuration.registry import ALGORITHMS
    from agents.common.errors import ConfigError
    from agents.studies import tuning

    with pytest.raises(ConfigError, match="learning_rate: log must be true or false, got 'no'"):
        tuning.SearchSpace(
            {"learning_rate": {"type": "float", "low": 1e-5, "high": 1e-3, "log": "no"}}, ALGORITHMS["custom"], "x"
        )


@pytest.mark.parametrize("trainer", [custom_train, sb3_train], ids=["custom_train", "sb3_train"])
def test_a_run_shorter_than_its_eval_freq_is_evaluated_once_at_its_end(tmp_path, capsys, trainer):
    argv = [*UAV, "--timesteps", "300", "--log-dir", str(tmp_path), "--hyperparams", "buffer_size=500", "learning_starts=100"]
    assert run_cli(trainer.main, [*argv, "--eval-freq", "25000", "--eval-episodes", "1", "--no-progress"]) == 0
    assert "is past this run's 300 steps: it is evaluated once, at its end" in capsys.readouterr().err
    with np.load(next(tmp_path.glob("*/UAVGrid-v0_1")) / "evaluations.npz") as data:
        assert data["timesteps"].tolist() == [300]


def test_a_replay_buffer_of_another_stride_is_refused_on_resume(runs, tmp_path, capsys):
    """The custom run trained 1 env a step (self-play on BallDuel): a buffer claiming 5 would
    sample other envs' steps as the n-step continuation, and crashed mid-run."""
    run = copy_run(runs["custom"], tmp_path)
    with np.load(run / "replay_buffer.npz") as data:
        arrays = dict(data)
    arrays["stride"] = np.array(5)
    np.savez(run / "replay_buffer.npz", **arrays)
    out = tmp_path / "out"
    err = refused(capsys, custom_train.main, ["--resume", str(run), "--timesteps", "10", "--log-dir", str(out)], out)
    assert "stride 5 with" in err and "this run adds" in err


def test_a_study_whose_budget_ends_before_learning_starts_is_refused(tmp_path, capsys):
    argv = ["--env", "UAVGrid-v0", "--timesteps", "5000", "--log-dir", str(tmp_path)]
    assert "--timesteps 5000 is not past learning_starts=5000: the run would end before its first update" in refused(
        capsys, tune.main, argv
    )
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("flag", ["-f", "--folder"])
@pytest.mark.slow  # real processes or a training run
def test_an_rl_zoo_command_on_a_missing_folder_is_one_line(tmp_path, flag):
    missing = tmp_path / "nowhere"
    done = _run_command(["agents.rlzoo", "enjoy", "--algo", "dqn", "--env", "BallDuel-v0", flag, str(missing)])
    assert f"{flag} {str(missing)!r}: no such folder" in _refused_line(done)


@pytest.mark.parametrize(
    "args, message",
    [
        (["enjoy", "--algo", "nope", "--env", "BallDuel-v0"], "--algo 'nope': unknown to the RL Zoo here; valid: a2c"),
        (["enjoy", "--algo", "dqn", "--env", "Nope-v0"], "--env 'Nope-v0': unknown to the RL Zoo here; valid: BallDuel-v0"),
        (["plots.all_plots", "-a", "dqn", "nope", "-e", "BallDuel-v0"], "-a 'nope': unknown to the RL Zoo here"),
    ],
)
def test_an_rl_zoo_command_naming_an_unknown_algorithm_or_env_is_one_line(args, message, capsys, monkeypatch):
    from agents import rlzoo
    from tests.helpers import keep_gymnasium_time_limit, refused

    keep_gymnasium_time_limit(monkeypatch)  # the names are checked against rl_zoo3's, imported in process
    assert message in refused(capsys, rlzoo.main, args)


def test_a_video_name_too_long_for_the_file_system_is_refused_before_any_game(tmp_path, capsys):
    from agents.artifacts.video import check_video_path
    from agents.common.errors import UsageError

    with pytest.raises(UsageError, match="is too long for its folder"):
        check_video_path(tmp_path / ("a" * 300 + ".mp4"))


TRACKING = [
    ({"WANDB_MODE": "bogus"}, [], "WANDB_MODE='bogus' is not a W&B mode"),
    ({"WANDB_MODE": "offline"}, ["--wandb-project", "a/b?c"], "Invalid project name 'a/b?c'"),
    # No key: none in the environment, and a home with no .netrc or W&B settings.
    ({"WANDB_MODE": "online", "WANDB_API_KEY": None, "HOME": "/nonexistent"}, [], "--track: no W&B API key configured"),
]


@pytest.mark.parametrize("environ,flags,message", TRACKING, ids=[m for _, _, m in TRACKING])
def test_tracking_settings_wandb_refuses_are_refused_before_the_run_folder(
    tmp_path, capsys, monkeypatch, environ, flags, message
):
    pytest.importorskip("wandb")
    for key, value in environ.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    argv = [*UAV, "--timesteps", "300", "--log-dir", str(tmp_path), *TINY, "--track", *flags]
    assert message in refused(capsys, custom_train.main, argv, tmp_path)
    assert list(tmp_path.iterdir()) == []


SUMO_PPO = ["--algo", "ppo", "--env", "BallSumo-v0"]
#: What a run was given that it could not use: refused in one line before any folder.
UNUSABLE = [
    ([*SUMO_PPO, "--hyperparams", "rollout_steps=100000000000"], "rollout_steps=100000000000 x n_envs=8 needs about"),
    (["--algo", "pqn", *UAV, "--hyperparams", "rollout_steps=10000000000"], "rollout_steps=10000000000 x n_envs=2 needs"),
    ([*SUMO_PPO, "--hyperparams", "n_epochs=1000000000"], "n_epochs=1000000000 must be an integer in [1, 1000]"),
    ([*SUMO_PPO, "--timesteps", "1024", "--hyperparams", "rollout_steps=4096"], "past this run's 1024: it would end before"),
    (["--timesteps", "2000"], "--timesteps 2000 is not past learning_starts=5000: the run would end before its first update"),
    ([*SUMO_PPO, "--hyperparams", "self_play=dict(scripted='chaser,pusher,chaser')"], "names chaser more than once"),
]


@pytest.mark.parametrize("argv,message", UNUSABLE, ids=[m[:40] for _, m in UNUSABLE])
def test_what_a_run_could_not_use_is_refused_in_one_line_before_any_folder(tmp_path, capsys, argv, message):
    from agents import train

    assert message in refused(capsys, train.main, [*argv, "--log-dir", str(tmp_path)], tmp_path)
    assert list(tmp_path.iterdir()) == []
