"""The contract of an algorithm module of our own (:class:`AlgorithmModule`): what
:class:`agents.trainer.modules.ModuleLearner` trains (``dqn.py``, ``pqn.py``, ``distill.py``,
``kickstart.py``, ``finetune.py``, ``ppo.py``, or one registered in :mod:`agents.common.configuration.registry`),
and what its ``Agent`` offers the run (:class:`AlgorithmAgent`). The defaults of what a module may
leave out are :mod:`agents.algorithms.registered`'s."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import QConfig
from agents.session.hooks import Hooks
from agents.session.progress import Progress


class AlgorithmAgent(Protocol):
    """What an algorithm's agent offers the run (:class:`agents.trainer.modules.ModuleLearner`, the
    checkpoints, self-play's pool): a Q-learner (:class:`agents.algorithms.qlearner.QLearner`) or our
    PPO's actor-critic. Every network it plays is a
    :class:`agents.algorithms.networks.QNetwork`, whose argmax is its move."""

    #: The name its checkpoints carry (:mod:`agents.session.checkpoint`): each algorithm's own.
    FORMAT: str
    spec: dict[str, Any]
    config: Any
    device: torch.device
    n_updates: int

    @property
    def optimizer(self) -> torch.optim.Optimizer: ...

    @property
    def INEXACT_RESUME(self) -> str | None:  # noqa: N802 (a class constant of each agent)
        """Why a resume of its run cannot go on exactly (None: it can, see :meth:`runtime_state`)."""
        ...

    def __init__(
        self, spec: dict[str, Any], config: Any, device: str, seed: int = 0, amp: bool = False, compile: bool = False
    ) -> None: ...

    @property
    def online(self) -> torch.nn.Module:
        """The network that acts and learns."""
        ...

    @property
    def played(self) -> torch.nn.Module:
        """The network the run evaluates and saves as its model (the online one, or an average of it)."""
        ...

    @property
    def snapshotted(self) -> torch.nn.Module:
        """The network self-play's pool takes snapshots of."""
        ...

    def set_learning_rate(self, progress_remaining: float) -> float:
        """The learning rate for this point of training (1: start, 0: end)."""
        ...

    def runtime_state(self) -> dict[str, Any]:
        """What it holds between steps besides its networks and optimiser (generators and the like),
        for a resume that goes on exactly."""
        ...

    def load_runtime_state(self, state: dict[str, Any]) -> None: ...

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of it: the online network's weights under ``q``, every model file's
        key (a mean it plays instead under ``averaged``)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


@runtime_checkable
class AlgorithmModule(Protocol):
    """What an algorithm module of our own offers :class:`agents.trainer.modules.ModuleLearner`
    (``dqn.py`` and ``pqn.py`` are two: a module passes as this protocol, and the type checker
    holds them to it). A module may leave out ``STAGGER_ENVS`` (False), ``replay_buffer`` (none)
    and ``settings`` (:func:`agents.algorithms.networks.settings_of` its ``Config``):
    :func:`agents.algorithms.registered.algorithm_module` fills them in."""

    #: Whether the envs start at staggered steps (a short rollout of envs that all started together
    #: would hold one phase of their episodes only).
    STAGGER_ENVS: bool

    @property
    def Agent(self) -> type[AlgorithmAgent]:  # a class: the modules name it so
        """The learner, with its checkpoint ``FORMAT``."""
        ...

    def settings(self, section: Section, observation_space: Any, action_space: Any) -> tuple[QConfig, dict[str, Any]]:
        """The agent's config and network spec from a checked section and the spaces it will see."""
        ...

    def replay_buffer(self, config: Any, observation_space: Any, device: Any, seed: int | None) -> Any:
        """The replay buffer its config asks for, or None for an algorithm without one."""
        ...

    def learn(self, agent: Any, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: Any) -> None:
        """Train ``agent`` on ``env`` (:func:`agents.environments.steps.make_steps`'s) for
        ``timesteps`` more env steps."""
        ...
