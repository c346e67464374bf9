"""Weights-only checkpoints of our agents (DQN, PQN, PPO, any registered custom algorithm: each an
:class:`agents.session.contract.AlgorithmAgent`): state dicts and plain numbers, written to a
temporary file and renamed into place, read back with ``torch.load(weights_only=True)``. Each agent
class names its checkpoint format (``FORMAT``); every one holds a network ``spec``
(:func:`agents.algorithms.networks.network_spec`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.artifacts.runs import atomic_path
from agents.common.configuration.registry import ALGORITHMS, MODULE_LEARNER
from agents.common.errors import UsageError
from agents.common.networks.policies import ACTIVATIONS
from agents.common.readers import count, finite, mapping_of, torch_weights
from agents.session.contract import AlgorithmAgent
from agents.session.progress import Progress

SUFFIX = ".pt"


def check_tail_mean(state: dict[str, Any], tail_updates: int) -> None:
    """A checkpoint's tail mean is whole: the weights of the mean it counts updates of are there. A
    resume that took the latest weights in their place would go on from something that was not stopped."""
    if tail_updates and "averaged" not in state:
        raise ValueError(f"state agent: its tail mean counts {tail_updates} update(s) but its weights (averaged) are missing")


def agent_classes() -> dict[str, type[AlgorithmAgent]]:
    """Checkpoint format -> the agent class that writes it, for every registered custom algorithm."""
    modules = [algo.implementation() for algo in ALGORITHMS.values() if algo.learner == MODULE_LEARNER]
    return {module.Agent.FORMAT: module.Agent for module in modules}


def save_checkpoint(
    path: str | Path, agent: AlgorithmAgent, progress: Progress, run_state: dict[str, Any] | None = None
) -> None:
    """``run_state``: the run's games in progress, generators and the like
    (:meth:`agents.trainer.modules.ModuleLearner.run_state`), for a resume that goes on exactly."""
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
    check_finite(state["agent"], f"{what}: agent")
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


def check_finite(value: Any, what: str) -> None:
    """Every floating-point tensor in ``value`` (however deep in dicts and lists: the networks, the
    optimiser's moments) finite: a model with a NaN in it plays NaN, and a run resumed from one
    learns NaN from its first step."""
    pending: list[tuple[str, Any]] = [(what, value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, torch.Tensor):
            if item.is_floating_point() and not bool(torch.isfinite(item).all()):
                raise UsageError(f"{where} holds NaN or infinite values; a model holds finite numbers")
        elif isinstance(item, dict):
            pending.extend((f"{where} {key}", part) for key, part in item.items())
        elif isinstance(item, (list, tuple)):
            pending.extend((f"{where}[{k}]", part) for k, part in enumerate(item))


def check_spec(spec: Any, what: str) -> None:
    """A network spec (:func:`agents.algorithms.networks.network_spec`) as a file may hold it."""
    mapping_of(spec, f"{what}: spec", {"parts": dict, "net_arch": list, "n_actions": int, "layer_norm": bool})
    count(spec["n_actions"], f"{what}: spec n_actions", 1, 1024)
    if not all(isinstance(width, int) and not isinstance(width, bool) and 1 <= width <= 65536 for width in spec["net_arch"]):
        raise UsageError(f"{what}: spec net_arch must be layer widths in [1, 65536], got {spec['net_arch']!r}")
    if spec.get("activation", "relu") not in ACTIVATIONS:
        raise UsageError(f"{what}: spec activation {spec['activation']!r}; valid: {', '.join(ACTIVATIONS)}")


def restore_agent(state: dict[str, Any], config: Any, device: str, **agent_kwargs: Any) -> tuple[AlgorithmAgent, Progress]:
    """The saved agent with ``config`` (its run's hyperparameters, resumable ones possibly changed)."""
    agent = agent_classes()[state["format"]](state["spec"], config, device, **agent_kwargs)
    agent.load_state_dict(state["agent"])
    progress = Progress(**state["progress"])
    agent.set_learning_rate(progress.progress_remaining())
    return agent, progress


def check_optimizer(optimizer: torch.optim.Optimizer, own: list[dict[str, Any]]) -> None:
    """An optimiser as a checkpoint restored it, before it takes a step: its settings the run's own
    (``own``: its groups before the load; the step size aside, which the schedule sets), Adam's
    moments tensors of its parameters' shapes, its step counts non-negative; else a ValueError
    naming what (torch takes anything in, then fails or learns NaN at the first step)."""
    for k, (group, expected) in enumerate(zip(optimizer.param_groups, own, strict=True)):
        for key, value in expected.items():
            if key not in ("lr", "initial_lr") and group.get(key) != value:
                raise ValueError(f"state optimizer group {k} {key}: expected {value!r:.40}, got {group.get(key)!r:.40}")
        lr = group.get("lr")
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0.0 <= lr < float("inf"):
            raise ValueError(f"state optimizer group {k} lr: expected a number >= 0, got {lr!r:.40}")
        for parameter in group["params"]:
            for key, value in optimizer.state.get(parameter, {}).items():
                if not isinstance(value, torch.Tensor):
                    raise ValueError(f"state optimizer {key}: expected a tensor, got {type(value).__name__}")
                if key == "step":
                    if value.numel() != 1 or not bool((value >= 0).all()):
                        raise ValueError(f"state optimizer step: expected a count >= 0, got {value!r:.40}")
                elif value.shape != parameter.shape:
                    shapes = f"shape {tuple(value.shape)}, its parameter's {tuple(parameter.shape)}"
                    raise ValueError(f"state optimizer {key}: {shapes}")
