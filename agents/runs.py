"""Run folders (``runs/<algo>/<env-id>_<n>/``) and atomic file writes.

A run folder holds ``config.yml`` (the resolved settings), ``checkpoints/``, the best and
final models, ``monitor/`` CSVs, ``progress.csv`` and TensorBoard events. The final model
is written last, so its presence marks a finished run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

CONFIG_NAME = "config.yml"
FINAL_MODEL = "final_model"
BEST_MODEL = "best_model"
CHECKPOINTS = "checkpoints"


def new_run_dir(log_dir: str | Path, algo: str, env_id: str) -> Path:
    """Create and return the next free ``<log_dir>/<algo>/<env_id>_<n>``."""
    parent = Path(log_dir) / algo
    parent.mkdir(parents=True, exist_ok=True)
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


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only if the block succeeds."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_yaml(path: str | Path, data: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(yaml.safe_dump(data, sort_keys=False))


def read_config(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / CONFIG_NAME
    try:
        return yaml.safe_load(path.read_text())
    except OSError:
        raise FileNotFoundError(f"{str(path)!r} not found: is {str(run_dir)!r} a run folder?") from None
