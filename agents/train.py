"""Train any registered algorithm on a ballenvs environment: stable-baselines3's DQN (--algo dqn),
our DQN (--algo custom), PQN (--algo pqn), a pixel student distilled from a teacher that sees the
state (--algo distill), our DQN kickstarted by one (--algo kickstart), our DQN fine-tuned from a
model that plays (--algo finetune), our PPO, from nothing or from such a model (--algo ppo),
stable-baselines3's PPO (--algo sb3_ppo) and A2C (--algo sb3_a2c), and Ray RLlib's PPO (--algo
rllib_ppo); ``--help`` lists them from the registry.

    python -m agents.train                                       # SB3's DQN on BallDuel-v0, zoo_configs/dqn.yml
    python -m agents.train --algo custom --env UAVGrid-v0 --timesteps 200000 --n-envs 4
    python -m agents.train --algo pqn --env UAVGrid-v0            # PQN, zoo_configs/pqn.yml

CNN policies for image observations, MultiInputPolicy for UAVGrid's dict observation (as the
config says), on the GPU when there is one, with the env's own batched vector env by default.
Every algorithm takes the same flags, config files and run-folder layout, so they compare at equal
settings. ``python -m agents.sb3_train`` and ``python -m agents.custom_train`` are this command
with their algorithms preset.

The command line only: the trainer is :mod:`agents.trainer.run`.
"""

from __future__ import annotations

import sys
from typing import Any

from agents.session.cli import run_cli
from agents.trainer.command import TRAIN_COMMAND, answer_help


def __getattr__(name: str) -> Any:
    """``main`` and ``prepare`` are the trainer's, imported when first asked for (torch with them)."""
    if name in ("main", "prepare"):
        from agents.trainer import run as trainer

        return getattr(trainer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    answer_help(None, TRAIN_COMMAND)  # before torch: --help answers in half a second
    from agents.trainer.run import main

    sys.exit(run_cli(main))
