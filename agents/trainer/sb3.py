"""stable-baselines3 as ``python -m agents.train`` drives it: its DQN (``--algo dqn``), one
:class:`agents.trainer.training.Learner` around :func:`agents.sb3.sb3_dqn.build_dqn`'s model, and
its PPO and A2C (``--algo sb3_ppo``, ``sb3_a2c``) around :func:`agents.sb3.sb3_onpolicy.build_model`'s."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

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
from agents.sb3.sb3_onpolicy import ActionLogits, build_model
from agents.sb3.sb3_onpolicy import check_values as check_on_policy
from agents.sb3.sb3_onpolicy import save_model as save_on_policy_model
from agents.session.milestones import Milestones
from agents.trainer.setup import RunSetup, make_train_env

if TYPE_CHECKING:
    from agents.twoplayer.selfplay import SnapshotPool


def self_play_opponent(setup: RunSetup[Any]) -> Any:
    """The run's self-play opponent (its pool is bound once the model exists), or None."""
    if setup.self_play is None:
        return None
    from agents.twoplayer.selfplay import make_opponent  # only self-play loads the two-player machinery

    section = setup.section
    return make_opponent(setup.self_play, section.env_id, section.env_kwargs, section.frame_stack, setup.device)


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
        opponent = self_play_opponent(setup)
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


class SB3OnPolicyLearner:
    """stable-baselines3's PPO or A2C (the registry's ``algo.name``): no replay buffer, no tail mean;
    resumed as SB3 resumes (the weights, the optimiser and the step count; fresh games)."""

    def __init__(self, algo: Algorithm) -> None:
        self.algo = algo.name
        self.pool: SnapshotPool | None = None

    def check(
        self, section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
    ) -> SavedModel | None:
        check_on_policy(self.algo, section, observation_space, section.n_envs)
        if resume is None:
            return None
        saved = read_model_file(resume, device)
        restore(build_model(self.algo, section, (observation_space, action_space), None, device), saved, resume, device)  # type: ignore[arg-type]
        return saved

    def start(self, setup: RunSetup[SavedModel | None], logger: Logger) -> list[Any]:
        opponent = self_play_opponent(setup)
        env = make_train_env(setup, opponent=opponent)
        self.model: OnPolicyAlgorithm = build_model(self.algo, setup.section, env, setup.seed, setup.device)
        self.resumed = setup.resume is not None
        if setup.resume is not None and setup.checked is not None:
            restore(self.model, setup.checked, setup.resume, setup.device)  # type: ignore[arg-type]
            note(f"resumed from {setup.resume} at step {self.model.num_timesteps}")
            note(
                f"resume is not exact: stable-baselines3's {self.algo.removeprefix('sb3_').upper()} starts fresh games "
                "and generators (its model keeps the weights, optimiser and step count)"
            )
        if opponent is not None:
            self.pool = opponent.pool(setup.run_dir / SNAPSHOTS, ActionLogits(self.model.policy), None, setup.seed)
        self.model.set_logger(logger)
        return [env]

    @property
    def num_timesteps(self) -> int:
        return int(self.model.num_timesteps)

    def learn(self, timesteps: int, milestones: Milestones) -> None:
        callback = FeedMilestones(milestones, self.pool)
        self.model.learn(timesteps, callback=callback, reset_num_timesteps=not self.resumed)

    def policy(self) -> Any:
        return self.model

    def save(self, path: Path) -> None:
        save_on_policy_model(self.model, path)
