"""The contract of an algorithm module of our own (:class:`AlgorithmModule`): what
:class:`agents.trainer.modules.ModuleLearner` trains (``dqn.py``, ``pqn.py``, ``distill.py``,
``kickstart.py``, ``finetune.py``, ``ppo.py``, or one registered in :mod:`agents.common.configuration.registry`), and the
defaults of what a module may leave out (:func:`settings_of` its ``Config``); what its ``Agent`` offers
the run (:class:`AlgorithmAgent`)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Protocol, runtime_checkable

import torch

from agents.algorithms.networks import QNetwork, network_spec
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import QConfig
from agents.common.errors import UsageError
from agents.session.hooks import Hooks
from agents.session.progress import Progress


def settings_of(
    config_class: type[QConfig], section: Section, observation_space: Any, action_space: Any, **policy_defaults: Any
) -> tuple[Any, dict[str, Any]]:
    """An agent's config and network spec from a (checked) config section and the spaces it will
    see; ``policy_defaults``: the algorithm's own ``policy_kwargs`` defaults (PQN's LayerNorm)."""
    policy_kwargs = {**policy_defaults, **section.network}
    names = {f.name for f in fields(config_class)} - {"policy_kwargs"}  # the network's, in the spec
    config = config_class(**{k: v for k, v in section.algo_kwargs.items() if k in names})
    return config, network_spec(observation_space, int(action_space.n), section.policy, policy_kwargs)


class AlgorithmAgent(Protocol):
    """What an algorithm's agent offers the run (:class:`agents.trainer.modules.ModuleLearner`, the
    checkpoints, self-play's pool): a Q-learner (:class:`agents.algorithms.qlearner.QLearner`) or our
    PPO's actor-critic. Every network it plays is a :class:`QNetwork`, whose argmax is its move."""

    #: The name its checkpoints carry (:mod:`agents.algorithms.checkpoint`): each algorithm's own.
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
    def online(self) -> QNetwork:
        """The network that acts and learns."""
        ...

    @property
    def played(self) -> QNetwork:
        """The network the run evaluates and saves as its model (the online one, or an average of it)."""
        ...

    @property
    def snapshotted(self) -> QNetwork:
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
    and ``settings`` (:func:`settings_of` its ``Config``): :func:`algorithm_module` fills them in."""

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


class _WithDefaults:
    """A module that left out members of :class:`AlgorithmModule` that have defaults, completed."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self.STAGGER_ENVS: bool = getattr(module, "STAGGER_ENVS", False)
        self.Agent: type[AlgorithmAgent] = module.Agent
        self.learn = module.learn

    def settings(self, section: Section, observation_space: Any, action_space: Any) -> tuple[QConfig, dict[str, Any]]:
        own = getattr(self.module, "settings", None)
        if own is not None:
            return own(section, observation_space, action_space)
        return settings_of(self.module.Config, section, observation_space, action_space)

    def replay_buffer(self, config: Any, observation_space: Any, device: Any, seed: int | None) -> Any:
        own = getattr(self.module, "replay_buffer", None)
        return None if own is None else own(config, observation_space, device, seed)


def algorithm_module(module: Any, name: str) -> AlgorithmModule:
    """``module`` as the algorithm ``name`` registered it (its left-out members filled in), or one
    line naming what it lacks."""
    if isinstance(module, AlgorithmModule):
        return module
    missing = [member for member in ("Agent", "learn") if not hasattr(module, member)]
    if not (hasattr(module, "settings") or hasattr(module, "Config")):
        missing.append("settings (or Config)")
    if missing:
        raise UsageError(
            f"algorithm {name!r}: its module {module.__name__} lacks {', '.join(missing)} "
            "(agents.algorithms.contract.AlgorithmModule)"
        )
    return _WithDefaults(module)
