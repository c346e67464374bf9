"""Every algorithm the trainers offer, in one registry: the place where a new trainer registers.

An :class:`Algorithm` says how its runs are named (``runs/<name>/...``, ``algo: <name>`` in a
run's config.yml), which CLI trains it, which shipped hyperparameter file it reads, which keys
of a section it takes (with their types and ranges, checked before any run), the suffix of its
model files, and the function that loads one of its models for playing.
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


@dataclass(frozen=True)
class Algorithm:
    name: str  # of its run folders and in config.yml
    label: str  # in reports and plots
    trainer: str  # the module whose main() trains it: python -m <trainer>
    config: str  # its shipped hyperparameter file
    keys: Mapping[str, Key]  # the section keys it reads, besides the zoo's run keys
    suffix: str  # of its model files
    loader: str  # "module:function" (model_path, run_config, device) -> an object with predict() and q_net
    snapshot_loader: str  # the same for a self-play snapshot (agents.twoplayer.selfplay)
    replay_buffer: bool = True  # it keeps a replay buffer (sized by buffer_size)
    trainer_flags: tuple[str, ...] = ()  # extra arguments its trainer needs (custom_train's --algo)

    def load(self, model_path: Path, run_config: dict[str, Any], device: str, snapshot: bool = False) -> Any:
        module, function = (self.snapshot_loader if snapshot else self.loader).split(":")
        return getattr(importlib.import_module(module), function)(model_path, run_config, device)


ALGORITHMS: dict[str, Algorithm] = {
    "dqn": Algorithm(
        "dqn",
        "SB3 DQN",
        "agents.sb3_train",
        "dqn.yml",
        {**DQN_KEYS, "replay_buffer_kwargs": Key(dict), "optimize_memory_usage": Key(bool), "stats_window_size": Key(int, 1)},
        ".zip",
        "agents.sb3.dqn:load_policy",
        "agents.sb3.dqn:load_snapshot",
    ),
    "custom": Algorithm(
        "custom",
        "custom DQN",
        "agents.custom_train",
        "dqn.yml",
        {**DQN_KEYS, "double_q": Key(bool)},
        ".pt",
        "agents.custom.checkpoint:load_policy",
        "agents.custom.checkpoint:load_snapshot",
        trainer_flags=("--algo", "dqn"),
    ),
    "pqn": Algorithm(
        "pqn",
        "PQN",
        "agents.custom_train",
        "pqn.yml",
        PQN_KEYS,
        ".pt",
        "agents.custom.checkpoint:load_policy",
        "agents.custom.checkpoint:load_snapshot",
        replay_buffer=False,
        trainer_flags=("--algo", "pqn"),
    ),
}


def algorithm(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise UsageError(f"unknown algo {name!r}; valid: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]
