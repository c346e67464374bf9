"""Train our own agents (agents/algorithms/) on a ballenvs environment: our DQN (--algo custom), PQN
(--algo pqn), a pixel student distilled from a teacher (--algo distill), our DQN kickstarted by one
(--algo kickstart), our DQN fine-tuned from a model that plays (--algo finetune), our PPO (--algo
ppo); ``--help`` lists them from the registry.

    python -m agents.custom_train                                # our DQN on BallDuel-v0, zoo_configs/dqn.yml
    python -m agents.custom_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4
    python -m agents.custom_train --algo pqn --env UAVGrid-v0     # PQN, zoo_configs/pqn.yml

The older name of :mod:`agents.train` with our algorithms preset (``--algo custom`` by default;
any algorithm registered with this command is an --algo choice): the same flags, config files and
run folders as every algorithm; checkpoints are weights-only .pt files.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agents.common.configuration.registry import CUSTOM_TRAINER
from agents.session.cli import run_cli
from agents.trainer.command import Command, answer_help

COMMAND = Command(CUSTOM_TRAINER, "Train our own agents (agents/algorithms/) on a ballenvs environment", default_algo="custom")


def main(argv: list[str] | None = None) -> Path:
    answer_help(argv, COMMAND)
    from agents.trainer.run import main as run  # torch and stable-baselines3: once a run is asked for

    return run(argv, COMMAND)


if __name__ == "__main__":
    sys.exit(run_cli(main))
