"""Finding and loading trained models, whichever algorithm wrote them (keyed by the run's ``algo``).

A model is always read with its run folder's config.yml: the network and spaces are rebuilt
from there and the file supplies weights only (see the loaders of :mod:`agents.common.algorithms`),
so a model file never runs code, and one without a run folder is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.common.algorithms import ALGORITHMS, algorithm
from agents.common.errors import UsageError
from agents.common.runs import (
    BEST_MODEL,
    CHECKPOINTS,
    CONFIG_NAME,
    FINAL_MODEL,
    INTERRUPTED_MODEL,
    latest_model,
    model_file,
    read_config,
)

MODEL_SUFFIXES = tuple(dict.fromkeys(a.suffix for a in ALGORITHMS.values()))


def run_dir_of(model_path: Path) -> Path:
    """The run folder a model file belongs to (its checkpoints sit one level down)."""
    run_dir = model_path.parent.parent if model_path.parent.name == CHECKPOINTS else model_path.parent
    if not (run_dir / CONFIG_NAME).is_file():
        raise UsageError(
            f"model {str(model_path)!r} has no {CONFIG_NAME} in its run folder {str(run_dir)!r}: "
            "models are only loaded with the run's config (their network is rebuilt from it)"
        )
    return run_dir


def find_model(path: str | Path, names: tuple[str, ...] = (BEST_MODEL, FINAL_MODEL, INTERRUPTED_MODEL)) -> tuple[Path, Path]:
    """The model file and its run folder, from either of them; in a folder the first of ``names`` there."""
    path = Path(path)
    if path.is_dir():
        for name in names:
            found = model_file(path, name, MODEL_SUFFIXES)
            if found is not None:
                return found, path
        raise UsageError(f"no {', '.join(names)} in {str(path)!r}")
    if not path.is_file():
        raise UsageError(f"no model file or run folder at {str(path)!r}")
    if path.name.startswith("."):
        raise UsageError(f"{str(path)!r} is a temporary file left by an interrupted write, not a model")
    return path, run_dir_of(path)


def resume_model(path: str | Path) -> tuple[Path, Path, dict[str, Any]]:
    """What ``--resume PATH`` continues from: a model file, or a run folder's latest model (see
    :func:`agents.common.runs.latest_model`); with its run folder and that run's config."""
    path = Path(path)
    if path.is_dir():
        found = latest_model(path, MODEL_SUFFIXES)
        if found is None:
            raise UsageError(f"--resume {str(path)!r}: no {FINAL_MODEL}, {INTERRUPTED_MODEL} nor checkpoint in that folder")
        path = found
    elif not path.exists():
        raise UsageError(f"--resume {str(path)!r}: no such model file or run folder")
    model_path, run_dir = find_model(path)
    return model_path, run_dir, read_config(run_dir)


def load_policy(model_path: Path, run_dir: Path, device: str) -> tuple[Any, dict[str, Any]]:
    """The model at ``model_path`` as an object with ``predict(obs, deterministic)``, and its run's config."""
    config = read_config(run_dir)
    algo = algorithm(config["algo"])
    if model_path.suffix != algo.suffix:
        raise UsageError(f"model {str(model_path)!r}: a {config['algo']} run's models are {algo.suffix} files")
    return algo.load(model_path, config, device), config
