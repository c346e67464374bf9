"""Pieces every benchmark shares: the machine description, one-core pinning, JSON output, progress."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.common.hardware import machine
from agents.session.cli import add_progress_flag
from agents.session.console import Ticking

__all__ = ["machine", "one_core", "children_stopped", "write_json", "row", "RESULTS_DIR", "Measurements", "progress_flag"]

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


#: Seconds a child has, once told to stop, to save what it must (a trainer's interrupted model).
STOP_GRACE_SECONDS = 60.0


@contextmanager
def children_stopped(children: list[subprocess.Popen[Any]]) -> Iterator[list[subprocess.Popen[Any]]]:
    """The child processes put in ``children`` end with the block, however it ends (a SIGTERM or
    Ctrl-C to the benchmark, an error): each still running gets SIGTERM, and SIGKILL if it has not
    ended :data:`STOP_GRACE_SECONDS` later. Without this, a stopped benchmark's runs trained on."""
    try:
        yield children
    finally:
        running = [child for child in children if child.poll() is None]
        for child in running:
            child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in running:
            try:
                child.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


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


def progress_flag(parser: argparse.ArgumentParser) -> None:
    """--no-progress, as every long command has it: the results still print."""
    add_progress_flag(parser, "the results still print")


class Measurements(Ticking):
    """A benchmark's progress over its ``total`` measurements, the way ``agents.train`` shows its
    steps: a bar on a terminal, a line every 9 s when piped (kept coming during one long
    measurement), each result as a line of its own; ``enabled=False`` (``--no-progress``) prints
    the results alone. ``with Measurements(n, not args.no_progress) as shown: ... shown.result(line)``."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        super().__init__(total, "measurement", enabled)
