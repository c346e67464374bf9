"""Train stable-baselines3's algorithms on a ballenvs environment: its DQN (--algo dqn), PPO (--algo
sb3_ppo) and A2C (--algo sb3_a2c), as ``python -m agents.train`` does; ``--help`` lists them from the
registry.

    python -m agents.sb3_train                                   # BallDuel-v0, zoo_configs defaults
    python -m agents.sb3_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4

The older name of :mod:`agents.train` with stable-baselines3's algorithms preset: the same flags,
config files and run folders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agents.common.configuration.registry import SB3_TRAINER
from agents.session.cli import run_cli
from agents.trainer.command import Command, answer_help

COMMAND = Command(
    SB3_TRAINER, "Train stable-baselines3's algorithms on a ballenvs environment", default_algo="dqn", gpu_flags=False
)


def main(argv: list[str] | None = None) -> Path:
    answer_help(argv, COMMAND)
    from agents.trainer.run import main as run  # torch and stable-baselines3: once a run is asked for

    return run(argv, COMMAND)


if __name__ == "__main__":
    sys.exit(run_cli(main))
