"""stable-baselines3's DQN as ``python -m agents.train --algo dqn`` drives it: one
:class:`agents.trainer.training.Learner` around :func:`agents.sb3.sb3_dqn.build_dqn`'s model."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger

from agents.artifacts.models import SNAPSHOTS
from agents.common.configuration.config import Section
from agents.common.configuration.registry import Algorithm
from agents.common.errors import note
from agents.sb3.callbacks import AverageTail, FeedMilestones
from agents.sb3.sb3_dqn import (
    SavedModel,
    build_dqn,
    check_values,
    load_replay_buffer,
    read_model_file,
    restore,
    save_model,
    save_replay_buffer,
)
from agents.session.milestones import Milestones
from agents.trainer.setup import RunSetup, make_train_env

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

    def start(self, setup: RunSetup[SavedModel | None], logger: Logger) -> list[Any]:
        section, run_dir = setup.section, setup.run_dir
        opponent = None
        if setup.self_play is not None:  # only self-play loads the two-player machinery
            from agents.twoplayer.selfplay import make_opponent

            opponent = make_opponent(setup.self_play, section.env_id, section.env_kwargs, section.frame_stack, setup.device)
        env = make_train_env(setup, opponent=opponent)
        self.model: DQN = build_dqn(section, env, setup.seed, setup.device)
        self.resumed = setup.resume is not None
        if setup.resume is not None and setup.checked is not None:  # check() read the model to resume
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
        share = section.algo_kwargs.get("tail_averaging", 0.0)
        self.tail = AverageTail(share) if share > 0 else None
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
        # The mean is folded before the milestones see the step: an evaluation or a save there has the latest.
        callbacks: list[BaseCallback] = [] if self.tail is None else [self.tail]
        callbacks.append(FeedMilestones(milestones, self.pool))
        self.model.learn(timesteps, callback=callbacks, reset_num_timesteps=not self.resumed)

    def policy(self) -> Any:
        """What evaluations play: the model, or in its averaged tail the policy holding the mean."""
        return self.model if self.tail is None or self.tail.averaged is None else self.tail.averaged

    @contextlib.contextmanager
    def _saved_network(self) -> Iterator[None]:
        """The model holding the mean while it is written (checkpoints too: SB3's resume is not
        exact, and one from the tail goes on from the mean), its online weights back after."""
        if self.tail is None or self.tail.averaged is None:
            yield
            return
        online = {name: tensor.clone() for name, tensor in self.model.q_net.state_dict().items()}
        self.model.q_net.load_state_dict(self.tail.averaged.q_net.state_dict())
        try:
            yield
        finally:
            self.model.q_net.load_state_dict(online)

    def save(self, path: Path) -> None:
        with self._saved_network():
            save_model(self.model, path)

    def save_replay_buffer(self, path: Path) -> None:
        save_replay_buffer(self.model, path)

    def save_zoo_model(self, path: Path) -> None:
        with self._saved_network():
            save_model(self.model, path)
