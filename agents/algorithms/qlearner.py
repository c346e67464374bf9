"""The learner our Q-learning algorithms share (:mod:`agents.algorithms.dqn`, :mod:`.pqn`,
:mod:`.distill`, :mod:`.kickstart`): a Q-network and its optimiser on a device, seeded
epsilon-greedy exploration (ez-greedy's dashes too), bf16 autocast and ``torch.compile`` where
they pay (CUDA), the learning-rate schedule and the gradient step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from agents.algorithms.networks import QNetwork
from agents.common.readers import count
from agents.common.tensors import to_tensor
from agents.session.checkpoint import check_optimizer, check_tail_mean
from ballenvs.state import copied, fitting_or_none, generator_state, parts, set_generator_state


class QLearner:
    """A Q-network, Adam, and epsilon-greedy exploration; subclasses add their targets and updates.

    ``config`` has ``initial_learning_rate``, ``linear_learning_rate`` and ``max_grad_norm``."""

    INEXACT_RESUME: str | None = None  # agents.session.contract.AlgorithmAgent's
    FORMAT: str

    def __init__(self, spec: dict[str, Any], config: Any, device: str, seed: int, amp: bool, compile: bool) -> None:
        torch.manual_seed(seed)
        self.spec, self.config, self.device = spec, config, torch.device(device)
        self.q = QNetwork(spec).to(self.device)
        # One fused kernel for all parameters: measured 10x faster than the default per-tensor
        # loop on CPU for the Nature CNN (0.3 ms against 3.2 ms a step); CleanRL's PQN uses
        # RAdam, whose per-tensor loop took a third of an update's time here.
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=config.initial_learning_rate, fused=True)
        self._parameters = list(self.q.parameters())  # walked every update by the clipping: once, not per call
        self.rng = np.random.default_rng(seed)
        self._dash_left: np.ndarray | None = None  # ez-greedy: steps each env's random dash has left
        self._dash_action: np.ndarray | None = None
        self.n_updates = 0
        self.n_actions = spec["n_actions"]
        # bf16 autocast and torch.compile pay off on a GPU; on this CPU they were slower.
        self.amp = amp and self.device.type == "cuda"
        self.compiled = compile and self.device.type == "cuda"
        self._q_fn: Callable[[Any], torch.Tensor] = torch.compile(self.q) if self.compiled else self.q
        # An average of the online network's weights, evaluated and saved where there is one:
        # tail_averaging's (made at its first fold: before the tail the online network is) or
        # policy_averaging's (dqn's, from the start).
        self.averaged: QNetwork | None = None
        self.tail_updates = 0  # updates tail_averaging's mean is over

    @property
    def online(self) -> QNetwork:
        """The network that acts and learns: its Q-network."""
        return self.q

    @property
    def played(self) -> QNetwork:
        """The network the run evaluates and saves as its model: the online one, unless an average
        of it is kept (``tail_averaging``; dqn's ``policy_averaging``)."""
        return self.q if self.averaged is None else self.averaged

    @property
    def snapshotted(self) -> QNetwork:
        """The network self-play's pool takes snapshots of: the played one, but for tail_averaging's
        mean, which only evaluations and the saved model see (the run trains as it would without)."""
        return self.q if self.tail_updates else self.played

    def start_averaging(self) -> None:
        """The average starts as a copy of the online network."""
        self.averaged = QNetwork(self.spec).to(self.device).requires_grad_(False)
        self.averaged.load_state_dict(self.q.state_dict())
        # Walked every update: listed once (load_state_dict copies into these same tensors).
        averaged: list[torch.Tensor] = list(self.averaged.parameters())
        online: list[torch.Tensor] = list(self.q.parameters())
        self._averaging = (averaged, online)

    def average_tail(self) -> None:
        """Fold the online network into tail_averaging's uniform mean (started with it on the first call)."""
        if self.averaged is None:
            self.start_averaging()
        else:
            with torch.no_grad():
                torch._foreach_lerp_(*self._averaging, 1.0 / (self.tail_updates + 1))
        self.tail_updates += 1

    def _autocast(self) -> Any:
        return torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp)

    def explore(self, greedy: np.ndarray, epsilon: float) -> np.ndarray:
        """Each greedy action, replaced by a uniform one with probability ``epsilon``; with
        ``exploration_repeat`` > 1 a replaced action is kept for a random number of steps."""
        repeat = getattr(self.config, "exploration_repeat", 1)
        if repeat <= 1:
            explore = self.rng.random(len(greedy)) < epsilon
            return np.where(explore, self.rng.integers(self.n_actions, size=len(greedy)), greedy)
        if self._dash_left is None or len(self._dash_left) != len(greedy):
            self._dash_left = np.zeros(len(greedy), dtype=np.int64)
            self._dash_action = np.zeros(len(greedy), dtype=np.int64)
        start = (self._dash_left == 0) & (self.rng.random(len(greedy)) < epsilon)
        assert self._dash_action is not None  # made with _dash_left
        self._dash_action = np.where(start, self.rng.integers(self.n_actions, size=len(greedy)), self._dash_action)
        self._dash_left = np.where(start, self.rng.integers(1, repeat + 1, size=len(greedy)), self._dash_left)
        dashing = self._dash_left > 0
        self._dash_left = np.maximum(self._dash_left - 1, 0)
        return np.where(dashing, self._dash_action, greedy)

    def epsilon_greedy(self, observation: Any, epsilon: float) -> np.ndarray:
        """Epsilon-greedy actions for a batch of observations, with one forward pass."""
        with torch.inference_mode(), self._autocast():
            greedy = self._q_fn(to_tensor(observation, self.device)).argmax(dim=1).cpu().numpy()
        return self.explore(greedy, epsilon)

    def gradient_step(self, loss: torch.Tensor) -> None:
        """One clipped Adam step on ``loss``."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self._parameters, self.config.max_grad_norm)
        self.optimizer.step()
        self.n_updates += 1

    def set_learning_rate(self, progress_remaining: float) -> float:
        """The learning rate for this point of training (1: start, 0: end), as SB3 sets it."""
        config = self.config
        rate = config.initial_learning_rate * (progress_remaining if config.linear_learning_rate else 1.0)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        return rate

    def runtime_state(self) -> dict[str, Any]:
        """What the agent holds between steps besides its networks and optimiser, for a resume that
        goes on exactly (:mod:`ballenvs.state`'s kinds of values): its exploration's generator
        and dashes; an algorithm adds its own."""
        return {
            "rng": generator_state(self.rng),
            "dash_left": copied(self._dash_left),
            "dash_action": copied(self._dash_action),
        }

    def load_runtime_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("rng", "dash_left", "dash_action"), "agent")
        dash_left = fitting_or_none(self._dash_left, state["dash_left"], "agent dash_left")
        dash_action = fitting_or_none(self._dash_action, state["dash_action"], "agent dash_action")
        if (dash_left is None) != (dash_action is None):
            raise ValueError("state agent: dash_left and dash_action must both be None or both arrays")
        set_generator_state(self.rng, state["rng"], "agent rng")
        self._dash_left, self._dash_action = dash_left, dash_action

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of the agent (an algorithm adds its own parts)."""
        averaged = {} if self.averaged is None else {"averaged": self.averaged.state_dict()}
        tail = {"tail_updates": self.tail_updates} if self.tail_updates else {}
        return {
            "q": self.q.state_dict(), "optimizer": self.optimizer.state_dict(), "n_updates": self.n_updates,
            **averaged, **tail,
        }  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.q.load_state_dict(state["q"])
        own = [{key: value for key, value in group.items() if key != "params"} for group in self.optimizer.param_groups]
        self.optimizer.load_state_dict(state["optimizer"])
        check_optimizer(self.optimizer, own)
        self.n_updates = count(state["n_updates"], "state agent n_updates")
        self.tail_updates = count(state.get("tail_updates", 0), "state agent tail_updates")
        check_tail_mean(state, self.tail_updates)
        if self.averaged is None and self.tail_updates:
            self.start_averaging()
        if self.averaged is not None:
            self.averaged.load_state_dict(state.get("averaged", state["q"]))  # a run before averaging: from its network
