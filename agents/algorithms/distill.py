"""A pixel student taught by a player that sees the state (DAgger: Ross, Gordon and Bagnell, 2011;
the privileged teacher of Learning by Cheating, Chen et al., 2019): the loop, the config, the student.

The student is a Q-network on the pixel observation (stacked frames, a CNN), saved as our DQN's
are, so it plays wherever a model plays. Every step the student's envs report its side of the
game at that moment, exactly (the env option ``state_info=True``: ``info["state"]``); the
teacher labels it, and the frame goes into a bounded buffer with its label. With probability
``teacher_share`` (falling linearly to 0 over ``teacher_share_fraction`` of the run) a step plays
the teacher's action, else the student's: the student comes to be labelled on the games it plays
itself, which is what DAgger corrects.

The teacher (``teacher`` in the config section; :mod:`agents.algorithms.teachers`, with the buffer of labels):

- a built-in player of a two-player game: its actions are the labels (cross-entropy on a one-hot
  target), except a player that also values every action (the planner): then the labels are
  ``softmax(values / temperature)`` and the loss is KL to them (Rusu et al., 2015);
- a model of the same two-player env trained on ``obs_type="state"`` (a file or run folder): its
  Q-values on the observation that state makes, through the same softmax;
- a one-player game's reference policy that reads the state (UAVGrid's ``greedy``: the env's
  ``state_policies``): its actions, one-hot.

The student's outputs are logits trained towards the teacher's policy; it acts greedily on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.algorithms.networks import settings_of
from agents.algorithms.qlearner import QLearner
from agents.algorithms.teachers import LabelBuffer, check_teaching, make_teacher, policy_cross_entropy, state_of
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import QConfig, Teaching, key, redefault
from agents.common.networks.augment import draw_shifts, shift_images
from agents.session.contract import AlgorithmModule
from agents.session.hooks import EpisodeLog, Hooks
from agents.session.progress import Progress, linear_epsilon

#: Envs that all start together stay as they are: the buffer of labels mixes their phases.
STAGGER_ENVS = False


@dataclass
class DistillConfig(Teaching, QConfig):
    """The distillation learner's (zoo_configs/distill.yml): a teacher that
    sees the state labels every frame the pixel student plays (DAgger), the student learns the
    labels. The exploration keys are the student's own epsilon, off by default."""

    teacher_share: float = key(1.0, "the chance at the start that a step plays the teacher's action", low=0, high=1)
    teacher_share_fraction: float = key(
        0.5, "the share of the run over which the teacher's share falls linearly to 0", low=0, high=1, resumable=True
    )
    exploration_initial_eps: float = redefault(QConfig, "exploration_initial_eps", 0.0)
    exploration_final_eps: float = redefault(QConfig, "exploration_final_eps", 0.0)
    learning_rate: float | str = redefault(QConfig, "learning_rate", 3e-4)
    buffer_size: int = key(200_000, "labelled frames the buffer keeps (the oldest go first)", low=1)
    learning_starts: int = key(2_000, "env steps (labelled frames) before the first update", low=0)
    batch_size: int = key(256, "labelled frames a minibatch samples", low=1)
    train_freq: int = key(1, "vector-env steps between updates", low=1)
    gradient_steps: int = key(1, "updates each time", low=1)
    augment_shift: int = key(0, "each sampled frame stack shifted by up to this many pixels; 0: off", low=0, high=16)


def settings(section: Section, observation_space: Any, action_space: Any) -> tuple[DistillConfig, dict[str, Any]]:
    """The student's config and network from a checked section, its teacher checked too."""
    config, spec = settings_of(DistillConfig, section, observation_space, action_space)
    check_teaching(config, section, action_space)
    return config, spec


class DistillAgent(QLearner):
    """The student network and its optimiser, and the teacher that labels its frames."""

    FORMAT = "ballenvs-custom-distill/1"  # of its checkpoints
    INEXACT_RESUME = "the teacher's generators are not saved"

    def __init__(
        self, spec: dict[str, Any], config: DistillConfig, device: str, seed: int = 0, amp: bool = False, compile: bool = False
    ) -> None:
        super().__init__(spec, config, device, seed, amp, compile)
        self.teacher = make_teacher(config, device, seed)

    act = QLearner.epsilon_greedy  # greedy on its logits, as a Q-learner on its Q-values

    def loss(self, observations: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        with self._autocast():
            logits = self._q_fn(observations).float()
        return policy_cross_entropy(logits, targets)

    def update(self, observations: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if self.config.augment_shift:
            observations = shift_images(observations, draw_shifts(self.rng, len(targets), self.config.augment_shift))
        loss = self.loss(observations, targets)
        self.gradient_step(loss)
        return loss.detach()


Agent = DistillAgent


def replay_buffer(config: DistillConfig, observation_space: Any, device: Any, seed: int | None) -> LabelBuffer:
    return LabelBuffer(config.buffer_size, observation_space, device, seed)


def teacher_share(config: DistillConfig, progress: Progress) -> float:
    """The chance that a step plays the teacher's action: ``teacher_share`` falling linearly to 0
    over ``teacher_share_fraction`` of the run."""
    return linear_epsilon(
        progress.num_timesteps, progress.exploration_horizon, config.teacher_share, 0.0, config.teacher_share_fraction
    )


def learn(
    agent: DistillAgent,
    env: Any,
    progress: Progress,
    timesteps: int,
    hooks: Hooks,
    buffer: LabelBuffer,
    log_every_episodes: int = 4,
) -> None:
    """Play ``timesteps`` more env steps, labelling every frame the student sees and learning
    from the labels, or fewer if ``hooks.on_step`` says stop."""
    config, n_envs, teacher = agent.config, env.num_envs, agent.teacher
    log = EpisodeLog(hooks, progress.num_timesteps, log_every_episodes)
    loss: torch.Tensor | None = None
    end = progress.num_timesteps + timesteps
    vec_steps, agreed, labelled = progress.num_timesteps // n_envs, 0, 0
    obs = env.first_observations()
    states = state_of(env.reset_info)
    teacher.reset(np.ones(n_envs, dtype=bool))
    while progress.num_timesteps < end:
        teacher_actions, targets = teacher.label(states)
        student_actions = agent.act(obs, progress.epsilon(config))
        agreed += int(np.count_nonzero(student_actions == teacher_actions))
        labelled += n_envs
        buffer.add(obs, targets, teacher_actions)
        played_by_teacher = agent.rng.random(n_envs) < teacher_share(config, progress)
        step = env.step(np.where(played_by_teacher, teacher_actions, student_actions))
        obs, states = step.observations, state_of(step.info)
        if step.ended.any():
            teacher.reset(step.ended)
        progress.num_timesteps += n_envs
        vec_steps += 1
        if vec_steps % config.train_freq == 0 and progress.num_timesteps > config.learning_starts:
            if config.linear_learning_rate:
                agent.set_learning_rate(progress.progress_remaining())
            for _ in range(config.gradient_steps):
                loss = agent.update(*buffer.sample(config.batch_size))
        if step.episodes and labelled:
            hooks.record("train/teacher_agreement", agreed / labelled)  # of the student's own choices, since the last
            agreed, labelled = 0, 0
        log.add(progress, step.episodes, loss)
        if not hooks.on_step(progress):
            break


if TYPE_CHECKING:  # mypy holds this module to the contract of an algorithm module
    from agents.algorithms import distill as _this_module

    _: AlgorithmModule = _this_module
