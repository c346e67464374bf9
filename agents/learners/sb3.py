"""stable-baselines3's DQN as ``python -m agents.train --algo dqn`` drives it: one
:class:`agents.common.session.training.Learner` around :func:`agents.sb3.dqn.build_dqn`'s model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.logger import Logger

from agents.common.artifacts.models import SNAPSHOTS
from agents.common.configuration.config import Section
from agents.common.configuration.registry import Algorithm
from agents.common.errors import note
from agents.common.session.milestones import Milestones
from agents.common.session.setup import RunSetup, make_train_env
from agents.sb3.callbacks import FeedMilestones
from agents.sb3.dqn import (
    SavedModel,
    build_dqn,
    check_values,
    load_replay_buffer,
    read_model_file,
    restore,
    save_model,
    save_replay_buffer,
)

if TYPE_CHECKING:
    from agents.twoplayer.selfplay import SnapshotPool


class SB3Learner:
    def __init__(self, algo: Algorithm) -> None:
        self.pool: SnapshotPool | None = None

    def check(
        self, section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
    ) -> SavedModel | None:
        """What stable-baselines3 would find wrong only once training starts (or in a worker); the
        model to resume, read once, for ``start``."""
        check_values(section, observation_space)
        if resume is None:
            return None
        saved = read_model_file(resume, device)
        spaces_only = (observation_space, action_space)  # the weights fit this run's network, or the file is refused here
        restore(build_dqn(section, spaces_only, None, device, buffer_size=1, learning_starts=0), saved, resume, device)
        return saved

    def start(self, setup: RunSetup, logger: Logger) -> list[Any]:
        section, run_dir = setup.section, setup.run_dir
        opponent = None
        if setup.self_play is not None:  # only self-play loads the two-player machinery
            from agents.twoplayer.selfplay import make_opponent

            opponent = make_opponent(setup.self_play, section.env_id, section.env_kwargs, section.frame_stack, setup.device)
        env = make_train_env(setup, opponent=opponent)
        self.model: DQN = build_dqn(section, env, setup.seed, setup.device)
        self.resumed = setup.resume is not None
        if setup.resume is not None:
            restore(self.model, setup.checked, setup.resume, setup.device)
            message = f"resumed from {setup.resume} at step {self.model.num_timesteps}"
            if setup.resume_buffer is not None:
                message += f" with its replay buffer ({load_replay_buffer(self.model, setup.resume_buffer)} transitions)"
            note(message)
            # SB3 saves none of these, and its learn() resets the envs: docs/guarantees.md says so too.
            note(
                "resume is not exact: stable-baselines3's DQN starts fresh games and generators (its model keeps the "
                "weights, optimiser and step count; --save-replay-buffer keeps the buffer)"
            )
        if opponent is not None:
            self.pool = opponent.pool(run_dir / SNAPSHOTS, self.model.q_net, None, setup.seed)
        self.model.set_logger(logger)
        return [env]

    @property
    def learning_starts(self) -> int:
        return int(self.model.learning_starts)

    @property
    def num_timesteps(self) -> int:
        return int(self.model.num_timesteps)

    def learn(self, timesteps: int, milestones: Milestones) -> None:
        # A resumed run continues its schedules over all its steps, as ours do.
        self.model.learn(timesteps, callback=FeedMilestones(milestones, self.pool), reset_num_timesteps=not self.resumed)

    def policy(self) -> DQN:
        return self.model

    def save(self, path: Path) -> None:
        save_model(self.model, path)

    def save_replay_buffer(self, path: Path) -> None:
        save_replay_buffer(self.model, path)

    def save_zoo_model(self, path: Path) -> None:
        save_model(self.model, path)
