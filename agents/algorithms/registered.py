"""An algorithm module as its registry entry names it (:mod:`agents.common.configuration.registry`),
the members of :class:`agents.session.contract.AlgorithmModule` it left out filled in: what
:class:`agents.trainer.modules.ModuleLearner` trains and the loaders read."""

from __future__ import annotations

from typing import Any

from agents.algorithms.networks import settings_of
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import QConfig
from agents.common.errors import UsageError
from agents.session.contract import AlgorithmAgent, AlgorithmModule


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
            "(agents.session.contract.AlgorithmModule)"
        )
    return _WithDefaults(module)
