"""Our saved networks as policies that play (the loaders :mod:`agents.common.configuration.registry`
registers for every algorithm of ours): a checkpoint's or a self-play snapshot's Q-network,
checked against the network its run's config makes, behind stable-baselines3's ``predict``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.algorithms.networks import QNetwork
from agents.algorithms.registered import algorithm_module
from agents.artifacts.models import read_snapshot, section_of, spaces_of
from agents.common.configuration.registry import algorithm
from agents.common.errors import UsageError
from agents.common.tensors import to_tensor
from agents.session.checkpoint import load_checkpoint


class QNetworkPolicy:
    """A Q-network behind stable-baselines3's ``predict`` interface, for evaluation: a loaded one,
    or the one still learning (its mode is left as it is: it plays under ``inference_mode``)."""

    def __init__(self, q: QNetwork, exploration_rate: float, device: str, seed: int = 0) -> None:
        self.q = q
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


def load_policy(path: str | Path, run_config: dict[str, Any], device: str = "cpu") -> QNetworkPolicy:
    """A saved agent that plays (the loader :mod:`agents.common.configuration.registry` registers): the network
    is the one the run's config and env make, and the checkpoint must hold that network's weights."""
    state = load_checkpoint(path, device)
    spec = run_spec(run_config)
    if state["spec"] != spec:
        raise UsageError(
            f"checkpoint {str(path)!r} holds a network ({_shape(state['spec'])}) other than its run's config makes "
            f"({_shape(spec)})"
        )
    played = state["agent"].get("averaged", state["agent"]["q"])  # the network the run played (policy_averaging)
    return QNetworkPolicy(_network(spec, played, device, path), float(state["exploration_rate"]), device)


def run_spec(run_config: dict[str, Any]) -> dict[str, Any]:
    """The network spec a run's config and env make."""
    observation_space, action_space = spaces_of(run_config)
    implementation = algorithm_module(algorithm(run_config["algo"]).implementation(), run_config["algo"])
    return implementation.settings(section_of(run_config), observation_space, action_space)[1]


def _shape(spec: dict[str, Any]) -> str:
    activation = spec.get("activation", "relu")
    return f"net_arch {spec['net_arch']}, {activation}, {spec['n_actions']} actions, layer_norm {spec['layer_norm']}"


def _network(spec: dict[str, Any], weights: dict[str, Any], device: str, path: Any) -> QNetwork:
    q = QNetwork(spec).to(device)
    try:
        q.load_state_dict(weights)
    except RuntimeError as error:
        first = str(error).strip().splitlines()[0]
        raise UsageError(f"{str(path)!r}: its weights do not fit the run's network ({first})") from None
    return q.eval()


def load_snapshot(path: str | Path, run_config: dict[str, Any], device: str = "cpu") -> QNetworkPolicy:
    """A self-play snapshot of a run (its Q-network's spec and weights), as a policy that plays."""

    state = read_snapshot(Path(path), device)
    return QNetworkPolicy(_network(run_spec(run_config), state["q"], device, path), 0.0, device)
