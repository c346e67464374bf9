"""Weights-only checkpoints of our agents (DQN, PQN, any registered custom algorithm): state dicts and
plain numbers, written to a temporary file and renamed into place, read back with
``torch.load(weights_only=True)``. Each agent class names its checkpoint format (``FORMAT``);
every one holds a QNetwork ``spec``."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.algorithms.contract import algorithm_module
from agents.algorithms.networks import QNetwork
from agents.algorithms.progress import Progress
from agents.algorithms.qlearner import QLearner
from agents.algorithms.tensors import to_tensor
from agents.common.artifacts.models import read_snapshot
from agents.common.artifacts.runs import atomic_path
from agents.common.configuration.registry import ALGORITHMS, MODULE_LEARNER, algorithm
from agents.common.errors import UsageError
from agents.common.readers import count, finite, mapping_of, torch_weights
from agents.common.session.setup import section_of, spaces_of

SUFFIX = ".pt"


def agent_classes() -> dict[str, type[QLearner]]:
    """Checkpoint format -> the agent class that writes it, for every registered custom algorithm."""
    modules = [algo.implementation() for algo in ALGORITHMS.values() if algo.learner == MODULE_LEARNER]
    return {module.Agent.FORMAT: module.Agent for module in modules}


def save_checkpoint(path: str | Path, agent: QLearner, progress: Progress, run_state: dict[str, Any] | None = None) -> None:
    """``run_state``: the run's games in progress, generators and the like
    (:meth:`agents.learners.modules.ModuleLearner.run_state`), for a resume that goes on exactly."""
    state = {
        "format": agent.FORMAT,
        "spec": agent.spec,
        "config": asdict(agent.config),
        "progress": asdict(progress),
        "exploration_rate": progress.epsilon(agent.config),
        "agent": agent.state_dict(),
    }
    if run_state is not None:
        state["run_state"] = arrays_as_tensors(run_state)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


#: How a numpy array travels in a checkpoint: ``torch.load(weights_only=True)`` reads tensors, not arrays.
_ARRAY = "numpy array"


def arrays_as_tensors(value: Any) -> Any:
    """``value`` with each numpy array, however deep in dicts, lists and tuples, as a tensor marked as one."""
    if isinstance(value, np.ndarray):
        return {_ARRAY: torch.from_numpy(np.ascontiguousarray(value))}
    if isinstance(value, dict):
        return {key: arrays_as_tensors(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(arrays_as_tensors(item) for item in value)
    return value


def tensors_as_arrays(value: Any) -> Any:
    """What :func:`arrays_as_tensors` wrote, its arrays numpy arrays again."""
    if isinstance(value, dict):
        if set(value) == {_ARRAY} and isinstance(value[_ARRAY], torch.Tensor):
            return value[_ARRAY].numpy()
        return {key: tensors_as_arrays(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(tensors_as_arrays(item) for item in value)
    return value


def load_checkpoint(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """The checkpoint's contents (tensors and plain values only: ``weights_only=True``), each part
    checked for type and range; a missing, corrupt or foreign file is a one-line UsageError."""
    path = Path(path)
    what = f"checkpoint {str(path)!r}"
    if not path.is_file():
        raise UsageError(f"no checkpoint at {str(path)!r}")
    state = torch_weights(path, what, device)
    formats = agent_classes()
    if not isinstance(state, dict) or state.get("format") not in formats:
        raise UsageError(f"{str(path)!r} is not a custom agent's checkpoint (formats: {', '.join(formats)})")
    mapping_of(state, what, {"spec": dict, "config": dict, "progress": dict, "agent": dict, "exploration_rate": (int, float)})
    check_spec(state["spec"], what)
    progress = mapping_of(state["progress"], f"{what}: progress", {})
    for counter in ("num_timesteps", "episodes", "exploration_horizon"):
        count(progress.get(counter), f"{what}: progress {counter}")
    unknown = sorted(set(progress) - {"num_timesteps", "episodes", "exploration_horizon"})
    if unknown:
        raise UsageError(f"{what}: progress holds unknown {', '.join(map(str, unknown))}")
    if not isinstance(state.get("run_state", {}), dict):
        raise UsageError(f"{what}: run_state must be a mapping, got {type(state['run_state']).__name__}")
    rate = finite(state["exploration_rate"], f"{what}: exploration_rate")
    if not 0.0 <= rate <= 1.0:
        raise UsageError(f"{what}: exploration_rate must be in [0, 1], got {rate!r}")
    agent = mapping_of(state["agent"], f"{what}: agent", {"q": dict})
    for name in ("q", "averaged"):
        weights = agent.get(name, {})
        if not isinstance(weights, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()
        ):
            raise UsageError(f"{what}: its Q-network weights ({name}) are not a mapping of tensors")
    return state


def check_spec(spec: Any, what: str) -> None:
    """A network spec (:func:`agents.algorithms.networks.network_spec`) as a file may hold it."""
    mapping_of(spec, f"{what}: spec", {"parts": dict, "net_arch": list, "n_actions": int, "layer_norm": bool})
    count(spec["n_actions"], f"{what}: spec n_actions", 1, 1024)
    if not all(isinstance(width, int) and not isinstance(width, bool) and 1 <= width <= 65536 for width in spec["net_arch"]):
        raise UsageError(f"{what}: spec net_arch must be layer widths in [1, 65536], got {spec['net_arch']!r}")


def restore_agent(state: dict[str, Any], config: Any, device: str, **agent_kwargs: Any) -> tuple[QLearner, Progress]:
    """The saved agent with ``config`` (its run's hyperparameters, resumable ones possibly changed)."""
    agent = agent_classes()[state["format"]](state["spec"], config, device, **agent_kwargs)
    agent.load_state_dict(state["agent"])
    progress = Progress(**state["progress"])
    agent.set_learning_rate(progress.progress_remaining())
    return agent, progress


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
    return f"net_arch {spec['net_arch']}, {spec['n_actions']} actions, layer_norm {spec['layer_norm']}"


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
