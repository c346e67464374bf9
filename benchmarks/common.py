"""Pieces every benchmark shares: the machine description, one-core pinning, JSON output."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.common.hardware import machine

__all__ = ["machine", "one_core", "write_json", "row", "RESULTS_DIR"]

RESULTS_DIR = Path(__file__).resolve().parent


@contextmanager
def one_core() -> Iterator[None]:
    """Run the block on a single core, as some goals are stated per core; the process's
    cores are restored after it (Linux only; elsewhere a no-op)."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


def write_json(name: str, payload: dict[str, Any]) -> Path:
    """Write ``<name>.json`` beside this file (or in $BALLENVS_BENCH_OUT), atomically."""
    folder = Path(os.environ.get("BALLENVS_BENCH_OUT", RESULTS_DIR))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def row(*cells: Any) -> str:
    """One row of a markdown table."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def check_ranges(ranges: Iterable[tuple[str, Any, tuple[int, int]]]) -> None:
    """Each flag's value (or list of values) within its [low, high]: the counts a benchmark takes
    size its work and memory, so each is bounded; the first one outside is a one-line UsageError."""
    from agents.common.errors import UsageError

    for flag, values, (low, high) in ranges:
        bad = [value for value in (values if isinstance(values, list) else [values]) if not low <= value <= high]
        if bad:
            raise UsageError(f"{flag} must be in {low}..{high}, got {bad[0]}")
