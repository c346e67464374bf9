"""A one-line description of the machine, for reports and benchmark results."""

from __future__ import annotations

import os
import platform


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
