"""Every algorithm the trainers offer, in one registry that drives every tool.

An :class:`Algorithm` has one name, used everywhere: its run folders (``runs/<name>/...``),
``algo: <name>`` in a run's config.yml, and the value of ``--algo`` (its trainer),
``agents.compare --agents`` and ``agents.tune --trainer``. It says which command line trains
it, which hyperparameter file it reads, which keys of a section it takes (with their types and
ranges, checked before any run), the module that implements it, the suffix of its model files,
and the functions that load one of its models for playing.

Adding an algorithm is its module, one entry in :data:`ALGORITHMS` and a config file; for our
own agents the module offers what :mod:`agents.custom.core` lists, and
``python -m agents.custom_train --algo <name>`` trains it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.common.config import Key
from agents.common.errors import UsageError

#: DQN's hyperparameters as stable-baselines3 means them; both DQN trainers check them alike.
DQN_KEYS: dict[str, Key] = {
    "learning_rate": Key(float, 0, low_open=True, schedule=True),
    "buffer_size": Key(int, 1),
    "learning_starts": Key(int, 0),
    "batch_size": Key(int, 1),
    "tau": Key(float, 0, 1, low_open=True),
    "gamma": Key(float, 0, 1),
    "train_freq": Key(int, 1),
    "gradient_steps": Key(int, 1, also=(-1,)),
    "target_update_interval": Key(int, 1),
    "exploration_fraction": Key(float, 0, 1),
    "exploration_initial_eps": Key(float, 0, 1),
    "exploration_final_eps": Key(float, 0, 1),
    "max_grad_norm": Key(float, 0, low_open=True),
    "n_steps": Key(int, 1),
    "policy_kwargs": Key(dict),
}
#: PQN's hyperparameters (zoo_configs/pqn.yml): n_steps is the rollout length, as in PPO.
PQN_KEYS: dict[str, Key] = {
    "learning_rate": Key(float, 0, low_open=True, schedule=True),
    "gamma": Key(float, 0, 1),
    "q_lambda": Key(float, 0, 1),
    "n_steps": Key(int, 1),
    "n_epochs": Key(int, 1),
    "n_minibatches": Key(int, 1),
    "exploration_fraction": Key(float, 0, 1),
    "exploration_initial_eps": Key(float, 0, 1),
    "exploration_final_eps": Key(float, 0, 1),
    "max_grad_norm": Key(float, 0, low_open=True),
    "policy_kwargs": Key(dict),
}
#: Keys a resumed run may change; the others would change what the saved model is.
RESUMABLE_KEYS = (
    "learning_rate",
    "exploration_fraction",
    "exploration_initial_eps",
    "exploration_final_eps",
    "max_grad_norm",
)


SB3_TRAINER = "agents.sb3_train"
CUSTOM_TRAINER = "agents.custom_train"


@dataclass(frozen=True)
class Algorithm:
    name: str  # its one name: run folders, config.yml, --algo, --agents, --trainer
    label: str  # in reports and plots
    trainer: str  # the module whose main() trains it: python -m <trainer> --algo <name>
    config: str  # its hyperparameter file: one shipped in agents/zoo_configs, or a path
    keys: Mapping[str, Key]  # the section keys it reads, besides the zoo's run keys
    module: str  # the module that implements it
    suffix: str  # of its model files
    loader: str  # "module:function" (model_path, run_config, device) -> an object with predict() and q_net
    snapshot_loader: str  # the same for a self-play snapshot (agents.twoplayer.selfplay)
    replay_buffer: bool = True  # it keeps a replay buffer (sized by buffer_size)

    @property
    def trainer_flags(self) -> tuple[str, ...]:
        """What its trainer's command line needs to train it."""
        return ("--algo", self.name)

    def config_path(self) -> Path:
        from agents.common.config import shipped_config

        return Path(self.config) if Path(self.config).is_absolute() else shipped_config(self.config)

    def implementation(self) -> Any:
        return importlib.import_module(self.module)

    def load(self, model_path: Path, run_config: dict[str, Any], device: str, snapshot: bool = False) -> Any:
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
        trainer=SB3_TRAINER,
        config="dqn.yml",
        keys={
            **DQN_KEYS,
            "replay_buffer_kwargs": Key(dict),
            "optimize_memory_usage": Key(bool),
            "stats_window_size": Key(int, 1),
        },
        module="agents.sb3.dqn",
        suffix=".zip",
        loader="agents.sb3.dqn:load_policy",
        snapshot_loader="agents.sb3.dqn:load_snapshot",
    )
)
#: Our own agents: custom_train runs any module that offers what agents.custom.core lists.
_CUSTOM: dict[str, Any] = {
    "trainer": CUSTOM_TRAINER,
    "suffix": ".pt",
    "loader": "agents.custom.checkpoint:load_policy",
    "snapshot_loader": "agents.custom.checkpoint:load_snapshot",
}
register(
    Algorithm(
        "custom",
        "custom DQN",
        config="dqn.yml",
        keys={**DQN_KEYS, "double_q": Key(bool), "exploration_repeat": Key(int, 1, 1000)},
        module="agents.custom.dqn",
        **_CUSTOM,
    )
)
register(Algorithm("pqn", "PQN", config="pqn.yml", keys=PQN_KEYS, module="agents.custom.pqn", replay_buffer=False, **_CUSTOM))


def algorithm(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise UsageError(f"unknown algo {name!r}; valid: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def trained_by(trainer: str) -> tuple[str, ...]:
    """The names of the algorithms a command line trains."""
    return tuple(name for name, algo in ALGORITHMS.items() if algo.trainer == trainer)


def check_algo(name: str, trainer: str) -> Algorithm:
    """``--algo NAME`` for ``trainer``: one of its algorithms; one of another trainer's says which trains it."""
    mine = trained_by(trainer)
    if name in mine:
        return ALGORITHMS[name]
    if name in ALGORITHMS:
        raise UsageError(
            f"--algo {name!r} ({ALGORITHMS[name].label}) is trained by python -m {ALGORITHMS[name].trainer}; "
            f"this one trains: {', '.join(mine)}"
        )
    raise UsageError(f"unknown --algo {name!r}; valid: {', '.join(mine)} (every algorithm: {', '.join(ALGORITHMS)})")
