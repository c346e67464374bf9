"""Train any registered algorithm on a ballenvs environment: stable-baselines3's DQN (--algo dqn),
our DQN (--algo custom), PQN (--algo pqn).

    python -m agents.train                                       # SB3's DQN on BallDuel-v0, zoo_configs/dqn.yml
    python -m agents.train --algo custom --env UAVGrid-v0 --timesteps 200000 --n-envs 4
    python -m agents.train --algo pqn --env UAVGrid-v0            # PQN, zoo_configs/pqn.yml

CNN policies for image observations, MultiInputPolicy for UAVGrid's dict observation (as the
config says), on the GPU when there is one, with the env's own batched vector env by default.
Every algorithm takes the same flags, config files and run-folder layout, so they compare at equal
settings. ``python -m agents.sb3_train`` and ``python -m agents.custom_train`` are this command
with their algorithms preset.

The command line only: the trainer is :mod:`agents.learners.trainer`.
"""

from __future__ import annotations

import sys

from agents.common.session.cli import run_cli
from agents.learners.trainer import main, prepare

__all__ = ["main", "prepare"]

if __name__ == "__main__":
    sys.exit(run_cli(main))
