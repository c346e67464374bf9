"""Weights-only checkpoints of our agents (DQN, PQN, any registered custom algorithm): state dicts and
plain numbers, written to a temporary file and renamed into place, read back with
``torch.load(weights_only=True)``. Each agent class names its checkpoint format (``FORMAT``);
every one holds a QNetwork ``spec``."""

from __future__ import annotations

import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.common.algorithms import ALGORITHMS, CUSTOM_TRAINER
from agents.common.errors import UsageError
from agents.common.runs import atomic_path
from agents.custom.core import Progress, QLearner, to_tensor
from agents.custom.networks import QNetwork

SUFFIX = ".pt"


def agent_classes() -> dict[str, type[QLearner]]:
    """Checkpoint format -> the agent class that writes it, for every registered custom algorithm."""
    modules = [algo.implementation() for algo in ALGORITHMS.values() if algo.trainer == CUSTOM_TRAINER]
    return {module.Agent.FORMAT: module.Agent for module in modules}


def save_checkpoint(path: str | Path, agent: QLearner, progress: Progress) -> None:
    state = {
        "format": agent.FORMAT,
        "spec": agent.spec,
        "config": asdict(agent.config),
        "progress": asdict(progress),
        "exploration_rate": progress.epsilon(agent.config),
        "agent": agent.state_dict(),
    }
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """The checkpoint's contents (tensors and plain values only: ``weights_only=True``); a
    missing, corrupt or foreign file is a one-line UsageError."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"no checkpoint at {str(path)!r}")
    try:
        with warnings.catch_warnings():  # torch warns about odd pickle protocols: the error below says it all
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location=device, weights_only=True)
    except Exception:  # torch raises many kinds for a corrupt file, with advice we must not print
        raise UsageError(f"cannot load checkpoint {str(path)!r}: not a weights-only checkpoint file") from None
    formats = agent_classes()
    if not isinstance(state, dict) or state.get("format") not in formats:
        raise UsageError(f"{str(path)!r} is not a custom agent's checkpoint (formats: {', '.join(formats)})")
    return state


def restore_agent(state: dict[str, Any], config: Any, device: str, **agent_kwargs: Any) -> tuple[QLearner, Progress]:
    """The saved agent with ``config`` (its run's hyperparameters, resumable ones possibly changed)."""
    agent = agent_classes()[state["format"]](state["spec"], config, device, **agent_kwargs)
    agent.load_state_dict(state["agent"])
    progress = Progress(**state["progress"])
    agent.set_learning_rate(progress.progress_remaining())
    return agent, progress


class CustomPolicy:
    """A trained Q-network behind stable-baselines3's ``predict`` interface, for evaluation."""

    def __init__(self, q: QNetwork, exploration_rate: float, device: str, seed: int = 0) -> None:
        self.q = q.eval()
        self.exploration_rate = exploration_rate
        self.device = torch.device(device)
        self.rng = np.random.default_rng(seed)

    @property
    def q_net(self) -> QNetwork:
        """The Q-network, under stable-baselines3's name for it."""
        return self.q

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False
    ) -> tuple[np.ndarray, None]:
        with torch.inference_mode():
            actions = self.q(to_tensor(observation, self.device)).argmax(dim=1).cpu().numpy()
        if not deterministic:
            explore = self.rng.random(len(actions)) < self.exploration_rate
            actions = np.where(explore, self.rng.integers(self.q.spec["n_actions"], size=len(actions)), actions)
        return actions, None


def load_policy(path: str | Path, run_config: dict[str, Any] | None = None, device: str = "cpu") -> CustomPolicy:
    """A saved agent that plays (the loader :mod:`agents.common.algorithms` registers): the network comes
    from the checkpoint's own spec, the weights from its state."""
    state = load_checkpoint(path, device)
    q = QNetwork(state["spec"]).to(device)
    q.load_state_dict(state["agent"]["q"])
    return CustomPolicy(q, float(state["exploration_rate"]), device)


def load_snapshot(path: str | Path, run_config: dict[str, Any] | None = None, device: str = "cpu") -> CustomPolicy:
    """A self-play snapshot of a run (its Q-network's spec and weights), as a policy that plays."""
    from agents.common.snapshots import read_snapshot

    state = read_snapshot(Path(path), device)
    q = QNetwork(state["spec"]).to(device)
    q.load_state_dict(state["q"])
    return CustomPolicy(q, 0.0, device)
