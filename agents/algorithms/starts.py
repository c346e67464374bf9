"""A network that starts from a model that already plays (``start_from``: a distilled student, an
earlier run's DQN), for :mod:`agents.algorithms.kickstart` and :mod:`agents.algorithms.finetune`.

A distilled student's outputs are logits of its teacher's policy, softmax(values / temperature):
its last layer is scaled by that temperature, so that its outputs are Q-values on the teacher's
scale whose softmax(Q / temperature) is the student's policy and whose argmax is its action.
"""

from __future__ import annotations

from typing import Any

import torch

from agents.algorithms.checkpoint import load_checkpoint
from agents.algorithms.networks import QNetwork
from agents.common.artifacts.models import find_model
from agents.common.artifacts.runs import BEST_MODEL, FINAL_MODEL, INTERRUPTED_MODEL
from agents.common.errors import UsageError


def start_weights(path: str) -> dict[str, Any]:
    """The checkpoint of the model a run starts from (one of ours: a distilled student, a DQN)."""
    try:
        model, _ = find_model(path, (FINAL_MODEL, BEST_MODEL, INTERRUPTED_MODEL))
    except UsageError as error:
        raise UsageError(f"start_from {path!r}: {error}") from None
    return load_checkpoint(model)


def check_start(path: str, spec: dict[str, Any]) -> None:
    """``start_from``'s network is this run's (``spec``) and its weights fit it, or one line
    saying how it differs."""
    state = start_weights(path)
    if state["spec"] != spec:
        raise UsageError(f"start_from {path!r}: its network {state['spec']} is not this run's ({spec})")
    try:
        QNetwork(spec).load_state_dict(state["agent"]["q"])
    except (RuntimeError, KeyError) as error:  # a file whose weights its spec does not describe
        first = str(error).strip().splitlines()[-1].strip()
        raise UsageError(f"start_from {path!r}: its weights do not fit its network ({first})") from None
    temperature = state["config"].get("temperature")
    if temperature is not None and not (isinstance(temperature, float) and 0.0 < temperature < float("inf")):
        raise UsageError(f"start_from {path!r}: its distill temperature {temperature!r} is not a positive number")


def load_start(network: QNetwork, path: str) -> None:
    """``network`` (this run's shape) given the start's weights, as Q-values (see the module docstring)."""
    state = start_weights(path)
    network.load_state_dict(state["agent"]["q"])
    temperature = state["config"].get("temperature")  # a distilled student's: its logits are values / it
    if isinstance(temperature, float):
        last = network.head[-1]
        assert isinstance(last, torch.nn.Linear)  # a QNetwork's head ends in its actions' layer
        with torch.no_grad():
            last.weight.mul_(temperature)
            last.bias.mul_(temperature)
