"""Self-play snapshots in a run folder (``snapshots/snapshot_<steps>_steps.pt``): a Q-network's
weights (and, for our own networks, their spec), weights only, and the loading of one as a
policy through its run's algorithm."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from agents.common.algorithms import algorithm
from agents.common.errors import UsageError
from agents.common.runs import atomic_path, read_config

SNAPSHOTS = "snapshots"
SNAPSHOT_FORMAT = "ballenvs-snapshot/1"


def save_snapshot(path: Path, steps: int, q: torch.nn.Module, spec: Mapping[str, Any] | None) -> None:
    """A Q-network's weights (and, for our own networks, their spec), weights only."""
    state = {"format": SNAPSHOT_FORMAT, "steps": steps, "q": {k: v.detach().cpu() for k, v in q.state_dict().items()}}
    if spec is not None:
        state["spec"] = dict(spec)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def read_snapshot(path: Path, device: str) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception:  # torch raises many kinds for a file that is not plain tensors
        raise UsageError(f"cannot load snapshot {str(path)!r}: not a weights-only snapshot file") from None
    if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
        raise UsageError(f"{str(path)!r} is not a self-play snapshot (expected format {SNAPSHOT_FORMAT!r})")
    return state


def snapshot_name(steps: int) -> str:
    return f"snapshot_{steps}_steps.pt"


def load_snapshot_policy(path: Path, run_dir: Path, device: str) -> tuple[Any, dict[str, Any]]:
    """A snapshot of a run as a policy that plays (``predict``, ``q_net``), and the run's config."""
    config = read_config(run_dir)
    return algorithm(config["algo"]).load(path, config, device, snapshot=True), config
