"""Run folders (``runs/<algo>/<env-id>_<n>/``), the files in them, and atomic writes.

A run folder holds ``config.yml`` (the resolved settings), ``checkpoints/``, the best model,
the replay buffer if asked for, then ``final_model`` (or ``interrupted_model`` after Ctrl-C)
and ``summary.yml``, written in that order: a run without a final model did not finish.
Every file is written to a hidden temporary name and renamed into place.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from agents.common.errors import UsageError
from agents.common.readers import MAX_SEED, count, finite, mapping_of, parse_yaml, read_text
from agents.common.stops import stops_wait_for_block

CONFIG_NAME = "config.yml"
SUMMARY_NAME = "summary.yml"
#: The final model's games at the run's end (a section's final_eval_episodes).
FINAL_EVALUATION = "final_evaluation.yml"
FINAL_MODEL = "final_model"
BEST_MODEL = "best_model"
INTERRUPTED_MODEL = "interrupted_model"
CHECKPOINTS = "checkpoints"
REPLAY_BUFFER = "replay_buffer.npz"
#: Where a run's evaluations are: the run folder's root, as the RL Zoo keeps them (its plots read them there).
EVALUATIONS = "evaluations.npz"

_TMP = re.compile(r"^\..+\.tmp-(\d+)(\.[^.]*)?$")
_CHECKPOINT = re.compile(r"^model_(\d+)_steps(\.[^.]+)$")


def check_log_dir(log_dir: str | Path, algo: str) -> Path:
    """``<log_dir>/<algo>``, created if needed and checked writable; else a UsageError naming why."""
    parent = Path(log_dir) / algo
    for path in (Path(log_dir), parent):
        if path.exists() and not path.is_dir():
            raise UsageError(f"--log-dir {str(log_dir)!r}: {str(path)!r} exists and is not a folder")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=parent) as probe:
            probe.write(b"x")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as error:
        raise UsageError(f"--log-dir {str(log_dir)!r}: cannot write in {str(parent)!r}: {error.strerror}") from None
    return parent


def check_output_file(path: str | Path, flag: str, suffixes: tuple[str, ...]) -> Path:
    """A file a command will write (atomically, at its end): one of ``suffixes``, in a folder that
    exists and takes a new file, and either new or a regular file to replace. Checked before any
    work is done, so that a bad path costs nothing and nothing is written to a FIFO or a device."""
    given, path = str(path), Path(path)  # Path("") is ".": name what was given
    if not path.name or path.suffix.lower() not in suffixes:
        raise UsageError(f"{flag} {given!r}: the file must end in {' or '.join(suffixes)}")
    if not path.parent.is_dir():
        raise UsageError(f"{flag} {str(path)!r}: no folder {str(path.parent)!r} to write it in")
    # The temporary name the write will use must fit too (atomic_path: ".<name>.tmp-<pid><suffix>"); a
    # name past the file system's limit is checked first: asking whether it exists raises.
    try:
        limit = os.pathconf(path.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(f".{path.name}.tmp-{os.getpid()}{path.suffix}".encode()) > limit:
        raise UsageError(
            f"{flag}: the file name {path.name[:40]!r}... is too long for its folder (at most about {limit - 20})"
        )
    if path.exists() and not path.is_file():
        raise UsageError(f"{flag} {str(path)!r} exists and is not a regular file: it is not replaced")
    try:
        with tempfile.TemporaryFile(dir=path.parent) as probe:
            probe.write(b"x")
            probe.flush()
    except OSError as error:
        raise UsageError(f"{flag} {str(path)!r}: cannot write in {str(path.parent)!r}: {error.strerror}") from None
    return path


def new_run_dir(log_dir: str | Path, algo: str, env_id: str) -> Path:
    """Create and return the next free ``<log_dir>/<algo>/<env_id>_<n>``."""
    parent = check_log_dir(log_dir, algo)
    pattern = re.compile(rf"^{re.escape(env_id)}_(\d+)$")
    taken = [int(m.group(1)) for p in parent.iterdir() if (m := pattern.match(p.name))]
    n = max(taken, default=0) + 1
    while True:
        run_dir = parent / f"{env_id}_{n}"
        try:
            run_dir.mkdir()  # atomic: two runs started at once get different folders
            return run_dir
        except FileExistsError:
            n += 1


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` (of this machine) is running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files that processes no longer running left in ``folder`` (a crash
    while writing); those of live processes are still being written."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        match = _TMP.match(path.name)
        if match and int(match.group(1)) != os.getpid() and not process_alive(int(match.group(1))):
            path.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only if the block succeeds.
    A stop that comes during the block waits for it (:func:`agents.common.stops.stops_wait_for_block`)."""
    path = Path(path)
    remove_stale_temporaries(path.parent)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}{path.suffix}")
    try:
        with stops_wait_for_block():
            yield tmp
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_yaml(path: str | Path, data: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(yaml.safe_dump(data, sort_keys=False))


#: What a run's config.yml holds besides its hyperparameters, and the type of each.
_RUN_FIELDS: dict[str, type | tuple[type, ...]] = {
    "algo": str,
    "env_id": str,
    "seed": int,
    "vec_env": str,
    "timesteps": int,
    "hyperparams": dict,
}
_OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "device": str,
    "resumed_from": (str, type(None)),
    "save_replay_buffer": bool,
    "opponent": (str, type(None)),
}


def read_config(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's config.yml, checked to be one: a one-line UsageError otherwise. Its fields
    are checked for type and range here, its hyperparameters where they are built into a section
    (:func:`agents.artifacts.models.section_of`)."""
    path = Path(run_dir) / CONFIG_NAME
    if not path.is_file():
        raise UsageError(f"{str(path)!r} not found: is {str(run_dir)!r} a run folder?")
    what = f"{str(path)!r}"
    config = parse_yaml(read_text(path, "run config"), what)
    if not isinstance(config, dict):
        raise UsageError(f"{what} is not a run's config: it holds {type(config).__name__}, not a mapping")
    missing = [key for key in _RUN_FIELDS if key not in config]
    if missing:
        raise UsageError(f"{what} is not a run's config: it lacks {', '.join(missing)}")
    mapping_of(config, f"run config {what}", _RUN_FIELDS)
    mapping_of({k: v for k, v in config.items() if k in _OPTIONAL_FIELDS}, f"run config {what}", {})
    for key, kind in _OPTIONAL_FIELDS.items():
        if key in config:
            mapping_of(config, f"run config {what}", {key: kind})
    count(config["seed"], f"run config {what}: seed", 0, MAX_SEED)
    count(config["timesteps"], f"run config {what}: timesteps", 1)
    check_run_fields(config, what)
    return config


def check_run_fields(config: dict[str, Any], what: str) -> None:
    """The algorithm, env, vec env and env options a run config names are ones that exist."""
    import ballenvs
    from agents.common.configuration.registry import ALGORITHMS

    if config["algo"] not in ALGORITHMS:
        raise UsageError(f"run config {what}: algo {config['algo']!r} is unknown; valid: {', '.join(ALGORITHMS)}")
    if config["env_id"] not in ballenvs.ENV_IDS:
        raise UsageError(f"run config {what}: env_id {config['env_id']!r} is unknown; valid: {', '.join(ballenvs.ENV_IDS)}")
    if config["vec_env"] not in ("native", "dummy", "subproc"):
        raise UsageError(f"run config {what}: vec_env {config['vec_env']!r}; valid: native, dummy, subproc")
    env_kwargs = config["hyperparams"].get("env_kwargs") or {}
    if not isinstance(env_kwargs, dict):
        raise UsageError(f"run config {what}: env_kwargs must be a mapping of env options, got {type(env_kwargs).__name__}")
    if env_kwargs.get("render_mode") is not None:
        raise UsageError(f"run config {what}: env_kwargs render_mode={env_kwargs['render_mode']!r}; a run trains unrendered")


def read_summary(run_dir: str | Path) -> dict[str, Any]:
    """A finished run's summary.yml, checked: its step counts and seconds."""
    path = Path(run_dir) / SUMMARY_NAME
    what = f"summary {str(path)!r}"
    summary = parse_yaml(read_text(path, "summary"), what)
    mapping_of(summary, what, {"steps": int, "seconds": (int, float), "total_steps": int})
    count(summary["steps"], f"{what}: steps")
    count(summary["total_steps"], f"{what}: total_steps")
    if finite(summary["seconds"], f"{what}: seconds") < 0:
        raise UsageError(f"{what}: seconds must be >= 0, got {summary['seconds']!r}")
    return summary


def checkpoint_name(steps: int, suffix: str) -> str:
    return f"model_{steps}_steps{suffix}"


def checkpoints(folder: Path, suffix: str) -> list[tuple[int, Path]]:
    """The checkpoints in ``folder`` as (steps, path), fewest steps first; temporary files are not checkpoints."""
    found = []
    if folder.is_dir():
        for path in folder.iterdir():
            match = _CHECKPOINT.match(path.name)
            if match and match.group(2) == suffix:
                found.append((int(match.group(1)), path))
    return sorted(found)


def model_file(run_dir: Path, name: str, suffixes: tuple[str, ...]) -> Path | None:
    """The run folder's model called ``name`` (best_model, final_model, ...), with any of the suffixes."""
    for suffix in suffixes:
        if (run_dir / f"{name}{suffix}").is_file():
            return run_dir / f"{name}{suffix}"
    return None


def latest_model(run_dir: Path, suffixes: tuple[str, ...]) -> Path | None:
    """What a resumed run continues from: the final model, else the interrupted one, else the
    checkpoint of most steps. A run folder is never written again once another run resumes from it."""
    for name in (FINAL_MODEL, INTERRUPTED_MODEL):
        found = model_file(run_dir, name, suffixes)
        if found is not None:
            return found
    saved = [entry for suffix in suffixes for entry in checkpoints(run_dir / CHECKPOINTS, suffix)]
    return max(saved)[1] if saved else None
