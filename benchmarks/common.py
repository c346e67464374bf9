"""Pieces every benchmark shares: the machine description, one-core pinning, JSON output."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent


def machine() -> str:
    """CPU model, cores in use / present, and the GPU if torch sees one."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    text = f"{model}, {cores} of {os.cpu_count()} cores"
    try:
        import torch

        if torch.cuda.is_available():
            text += f", GPU {torch.cuda.get_device_name(0)}"
    except ImportError:
        pass
    return text


def pin_to_one_core() -> None:
    """Run on a single core, as the goals are stated per core (Linux only; elsewhere a no-op)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def write_json(name: str, payload: dict[str, Any]) -> Path:
    """Write ``<name>.json`` beside this file, atomically."""
    path = RESULTS_DIR / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    os.replace(tmp, path)
    return path
