"""Self-play snapshots in a run folder (``snapshots/snapshot_<steps>_steps.pt``): a Q-network's
weights (and, for our own networks, their spec), weights only, and the loading of one as a
policy through its run's algorithm."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from agents.common.algorithms import algorithm
from agents.common.errors import UsageError
from agents.common.readers import count, mapping_of, torch_weights
from agents.common.runs import atomic_path, read_config

SNAPSHOTS = "snapshots"
_SNAPSHOT = re.compile(r"^snapshot_(\d{1,15})_steps\.pt$")
SNAPSHOT_FORMAT = "ballenvs-snapshot/1"


def save_snapshot(path: Path, steps: int, q: torch.nn.Module, spec: Mapping[str, Any] | None) -> None:
    """A Q-network's weights (and, for our own networks, their spec), weights only."""
    state = {"format": SNAPSHOT_FORMAT, "steps": steps, "q": {k: v.detach().cpu() for k, v in q.state_dict().items()}}
    if spec is not None:
        state["spec"] = dict(spec)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def read_snapshot(path: Path, device: str) -> dict[str, Any]:
    """A snapshot's contents, checked: its format, its step (an int >= 0) and a mapping of tensors."""
    what = f"snapshot {str(path)!r}"
    state = torch_weights(path, what, device)
    if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
        raise UsageError(f"{str(path)!r} is not a self-play snapshot (expected format {SNAPSHOT_FORMAT!r})")
    count(state.get("steps"), f"{what}: steps")
    weights = mapping_of(state, what, {"q": dict})["q"]
    if not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()):
        raise UsageError(f"{what}: its weights are not a mapping of tensors")
    return state


def snapshot_steps(path: Path) -> int:
    """The training step in a snapshot's name (``snapshot_<steps>_steps.pt``); another name is refused."""
    match = _SNAPSHOT.match(path.name)
    if match is None:
        raise UsageError(f"{str(path)!r} is not named as a snapshot (snapshot_<steps>_steps.pt)")
    return int(match.group(1))


def snapshot_name(steps: int) -> str:
    return f"snapshot_{steps}_steps.pt"


def load_snapshot_policy(path: Path, run_dir: Path, device: str) -> tuple[Any, dict[str, Any]]:
    """A snapshot of a run as a policy that plays (``predict``, ``q_net``), and the run's config."""
    config = read_config(run_dir)
    return algorithm(config["algo"]).load(path, config, device, snapshot=True), config
