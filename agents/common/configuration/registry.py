"""Every algorithm the trainers offer, in one registry that drives every tool.

An :class:`Algorithm` has one name, used everywhere: its run folders (``runs/<name>/...``),
``algo: <name>`` in a run's config.yml, and the value of ``python -m agents.train --algo``,
``agents.compare --agents`` and ``agents.tune --algo``. It says which hyperparameter file it
reads, the dataclass declaring the keys of a section it takes (:mod:`agents.common.configuration.hyperparameters`:
defaults, types and ranges, checked before any run), the module that implements it, the
:class:`agents.trainer.training.Learner` that trains it, the suffix of its model files, the
functions that load one of its models for playing, and which of the older command names (the
aliases ``agents.sb3_train`` and ``agents.custom_train``) trains it too.

Adding an algorithm is its module (its hyperparameters' dataclass in it), one entry in
:data:`ALGORITHMS` and a config file; for our own agents the module is an
:class:`agents.session.contract.AlgorithmModule`, which :class:`agents.trainer.modules.ModuleLearner`
trains; an algorithm of another family brings its own Learner (CONTRIBUTING, "Add an algorithm").
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agents.common.configuration.config import Key, Schema
from agents.common.configuration.config_files import shipped_config
from agents.common.configuration.hyperparameters import (
    RENAMED,
    PQNConfig,
    RLlibPPOConfig,
    SB3A2CConfig,
    SB3DQNConfig,
    SB3PPOConfig,
    StateDQNConfig,
    keys_of,
    resumable_keys,
)
from agents.common.errors import UsageError


class Policy(Protocol):
    """What an algorithm's loaders return: a model that acts as stable-baselines3's do, with its
    Q-network under SB3's name (self-play's opponents and the exploiters evaluate it batched)."""

    @property
    def q_net(self) -> Any: ...

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False
    ) -> tuple[Any, Any]: ...


TRAIN = "agents.train"  # the one command that trains every algorithm
#: The older command names, each ``agents.train`` with a preset: the algorithms it trains.
SB3_TRAINER = "agents.sb3_train"
CUSTOM_TRAINER = "agents.custom_train"
#: The Learner of our own algorithms: an entry that names it is one of ours (a family is its Learner).
MODULE_LEARNER = "agents.trainer.modules:ModuleLearner"


@dataclass(frozen=True)
class Algorithm:
    name: str  # its one name: run folders, config.yml, --algo (agents.train, agents.tune), --agents
    label: str  # in reports and plots
    alias: str  # the alias command that trains it too: python -m <alias> --algo <name>
    config: str  # its hyperparameter file: one shipped in agents/zoo_configs, or a path
    # The dataclass declaring its keys: the shipped ones' in agents.common.configuration.hyperparameters
    # (read without importing torch), or "module:Class", imported when used (one in its own module).
    hyperparameters: type | str
    module: str  # the module that implements it
    suffix: str  # of its model files
    # Loaders are named "module:function", (model_path, run_config, device) -> Policy: imported when
    # used, as gymnasium's entry points, since the registry must not import torch's side.
    loader: str
    snapshot_loader: str  # the same for a self-play snapshot (agents.twoplayer.selfplay)
    replay_buffer: bool = True  # it keeps a replay buffer (sized by buffer_size)
    # Its Learner, "module:Class" (agents.trainer.training.Learner), called with the algorithm and
    # the command's --amp and --compile; ours by default.
    learner: str = MODULE_LEARNER
    # The trainer's flags its Learner takes (agents.trainer.run.LEARNER_FLAGS): --amp and
    # --compile for ours, --address (a Ray cluster's) for RLlib's; the trainer refuses the others.
    learner_flags: tuple[str, ...] = ("amp", "compile")

    @property
    def config_class(self) -> type:
        """The dataclass of its hyperparameters."""
        if isinstance(self.hyperparameters, str):
            module, name = self.hyperparameters.split(":")
            return getattr(importlib.import_module(module), name)
        return self.hyperparameters

    @property
    def keys(self) -> Mapping[str, Key]:
        """The section keys it reads besides the zoo's run keys, with their types and ranges."""
        return keys_of(self.config_class)

    @property
    def resumable_keys(self) -> tuple[str, ...]:
        return resumable_keys(self.config_class)

    @property
    def trainer_flags(self) -> tuple[str, ...]:
        """What ``python -m agents.train`` (or its alias) needs to train it."""
        return ("--algo", self.name)

    @property
    def schema(self) -> Schema:
        """What its config sections are checked against (:func:`agents.common.configuration.config.build_section`)."""
        return Schema(self.keys, f"--algo {self.name}", RENAMED.get(self.config_class, {}))

    def config_path(self) -> Path:
        return Path(self.config) if Path(self.config).is_absolute() else shipped_config(self.config)

    def implementation(self) -> Any:
        return importlib.import_module(self.module)

    def make_learner(self, **options: Any) -> Any:
        """A new Learner for a run of this algorithm (``options``: those of its ``learner_flags`` given)."""
        module, name = self.learner.split(":")
        return getattr(importlib.import_module(module), name)(self, **options)

    def load(self, model_path: Path, run_config: dict[str, Any], device: str, snapshot: bool = False) -> Policy:
        module, function = (self.snapshot_loader if snapshot else self.loader).split(":")
        return getattr(importlib.import_module(module), function)(model_path, run_config, device)


ALGORITHMS: dict[str, Algorithm] = {}


def register(algo: Algorithm) -> Algorithm:
    """Add an algorithm to the registry (a name already there is replaced)."""
    ALGORITHMS[algo.name] = algo
    return algo


register(
    Algorithm(
        name="dqn",
        label="SB3 DQN",
        alias=SB3_TRAINER,
        config="dqn.yml",
        hyperparameters=SB3DQNConfig,
        module="agents.sb3.sb3_dqn",
        suffix=".zip",
        loader="agents.sb3.sb3_dqn:load_policy",
        snapshot_loader="agents.sb3.sb3_dqn:load_snapshot",
        learner="agents.trainer.sb3:SB3Learner",
        learner_flags=(),
    )
)
#: Our own agents: ModuleLearner trains any module that keeps agents.session.contract.AlgorithmModule.
_OURS: dict[str, Any] = {
    "alias": CUSTOM_TRAINER,
    "suffix": ".pt",
    "loader": "agents.algorithms.policy:load_policy",
    "snapshot_loader": "agents.algorithms.policy:load_snapshot",
}
register(
    Algorithm(
        "custom",
        "custom DQN",
        config="dqn.yml",
        hyperparameters=StateDQNConfig,
        module="agents.algorithms.dqn",
        **_OURS,
    )
)
register(
    Algorithm(
        "pqn",
        "PQN",
        config="pqn.yml",
        hyperparameters=PQNConfig,
        module="agents.algorithms.pqn",
        replay_buffer=False,
        **_OURS,
    )
)

register(
    Algorithm(
        "distill",
        "distilled student",
        config="distill.yml",
        hyperparameters="agents.algorithms.distill:DistillConfig",
        module="agents.algorithms.distill",
        **_OURS,
    )
)
register(
    Algorithm(
        "kickstart",
        "kickstarted DQN",
        config="kickstart.yml",
        hyperparameters="agents.algorithms.kickstart:KickstartConfig",
        module="agents.algorithms.kickstart",
        **_OURS,
    )
)


register(
    Algorithm(
        "finetune",
        "fine-tuned DQN",
        config="finetune.yml",
        hyperparameters="agents.algorithms.finetune:FinetuneConfig",
        module="agents.algorithms.finetune",
        **_OURS,
    )
)


register(
    Algorithm(
        "ppo",
        "our PPO",
        config="ppo.yml",
        hyperparameters="agents.algorithms.ppo:PPOConfig",
        module="agents.algorithms.ppo",
        replay_buffer=False,
        **_OURS,
    )
)


register(
    Algorithm(
        "rllib_ppo",
        "RLlib PPO",
        alias=TRAIN,
        config="rllib_ppo.yml",
        hyperparameters=RLlibPPOConfig,
        module="agents.trainer.rllib",
        suffix=".npz",
        loader="agents.rllib.network:load_policy",
        snapshot_loader="agents.rllib.network:load_snapshot",
        replay_buffer=False,
        learner="agents.trainer.rllib:RLlibLearner",
        learner_flags=("address",),
    )
)


# stable-baselines3's on-policy algorithms, which a user of SB3 reaches for first.
for _name, _label, _keys in (("sb3_ppo", "SB3 PPO", SB3PPOConfig), ("sb3_a2c", "SB3 A2C", SB3A2CConfig)):
    register(
        Algorithm(
            name=_name,
            label=_label,
            alias=SB3_TRAINER,
            config=f"{_name}.yml",
            hyperparameters=_keys,
            module="agents.sb3.sb3_onpolicy",
            suffix=".zip",
            loader="agents.sb3.sb3_onpolicy:load_policy",
            snapshot_loader="agents.sb3.sb3_onpolicy:load_snapshot",
            replay_buffer=False,
            learner="agents.trainer.sb3:SB3OnPolicyLearner",
            learner_flags=(),
        )
    )


#: The suffixes of the registered algorithms' model files, each once.
MODEL_SUFFIXES = tuple(dict.fromkeys(algo.suffix for algo in ALGORITHMS.values()))


def algorithm(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise UsageError(f"unknown algo {name!r}; valid: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def trained_by(command: str) -> tuple[str, ...]:
    """The names of the algorithms a command line trains: every one for ``agents.train``, its preset for an alias."""
    return tuple(name for name, algo in ALGORITHMS.items() if command in (TRAIN, algo.alias))


def check_algo(name: str, command: str) -> Algorithm:
    """``--algo NAME`` for the trainer ``command``: one of its algorithms; one of another's says which trains it."""
    mine = trained_by(command)
    if name in mine:
        return ALGORITHMS[name]
    if name in ALGORITHMS:
        raise UsageError(
            f"--algo {name!r} ({ALGORITHMS[name].label}) is trained by python -m {ALGORITHMS[name].alias} "
            f"(and python -m {TRAIN}); this one trains: {', '.join(mine)}"
        )
    others = "" if set(mine) == set(ALGORITHMS) else f" (python -m {TRAIN} trains every one: {', '.join(ALGORITHMS)})"
    sb3 = f"sb3_{name}"
    meant = f"; stable-baselines3's {name.upper()} is --algo {sb3}" if sb3 in ALGORITHMS else ""
    raise UsageError(f"unknown --algo {name!r}; valid: {', '.join(mine)}{others}{meant}")
