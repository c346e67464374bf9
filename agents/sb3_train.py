"""Train stable-baselines3 DQN on a ballenvs environment (``python -m agents.train --algo dqn``).

    python -m agents.sb3_train                                   # BallDuel-v0, zoo_configs defaults
    python -m agents.sb3_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4

The older name of :mod:`agents.train` with stable-baselines3's algorithms preset: the same flags,
config files and run folders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agents.common.configuration.registry import SB3_TRAINER
from agents.common.session.cli import run_cli
from agents.learners import trainer as train

COMMAND = train.Command(SB3_TRAINER, __doc__.split("\n\n")[0].strip(), default_algo="dqn", gpu_flags=False)


def main(argv: list[str] | None = None) -> Path:
    return train.main(argv, COMMAND)


if __name__ == "__main__":
    sys.exit(run_cli(main))
