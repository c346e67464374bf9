"""Weights-only checkpoints of the custom agent: state dicts and plain numbers, written to a
temporary file and renamed into place, read back with ``torch.load(weights_only=True)``."""

from __future__ import annotations

import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.custom.dqn import DQNAgent, DQNConfig, Progress, to_tensor
from agents.custom.networks import QNetwork
from agents.errors import UsageError
from agents.runs import atomic_path

FORMAT = "ballenvs-custom-dqn/1"
SUFFIX = ".pt"


def save_checkpoint(path: str | Path, agent: DQNAgent, progress: Progress) -> None:
    state = {
        "format": FORMAT,
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
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise UsageError(f"{str(path)!r} is not a custom DQN checkpoint (expected format {FORMAT!r})")
    state["spec"] = {"layer_norm": False, **state["spec"]}  # written before LayerNorm was an option
    return state


def restore_agent(state: dict[str, Any], config: DQNConfig, device: str, **agent_kwargs: Any) -> tuple[DQNAgent, Progress]:
    """The saved agent with ``config`` (its run's hyperparameters, resumable ones possibly changed)."""
    agent = DQNAgent(state["spec"], config, device, **agent_kwargs)
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
    """A saved agent that plays (the loader :mod:`agents.algorithms` registers): the network comes
    from the checkpoint's own spec, the weights from its state."""
    state = load_checkpoint(path, device)
    q = QNetwork(state["spec"]).to(device)
    q.load_state_dict(state["agent"]["q"])
    return CustomPolicy(q, float(state["exploration_rate"]), device)
