"""Our DQN kickstarted by a teacher (Schmitt et al., "Kickstarting Deep Reinforcement Learning",
2018): the TD loss plus ``weight * H(teacher, student)``, the cross-entropy of the Q-network's
softmax to the teacher's labels on the frames it plays, the weight falling linearly from
``kickstart_weight`` to 0 over ``kickstart_fraction`` of the run. After that the agent learns from
pixels and reward alone, and can go past its teacher.

The network may start as a distilled student (``start_from``: :mod:`agents.algorithms.distill`'s
run or model, read by :mod:`agents.algorithms.warm_start`), so that DQN begins from a policy that
already plays.
The teacher labels only while its term counts: the frames the agent plays, from ``info["state"]`` (the env's ``state_info``),
go to a bounded buffer of labels (:class:`agents.algorithms.teachers.LabelBuffer`), sampled beside each
replay minibatch. Everything else is :mod:`agents.algorithms.dqn`'s, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.algorithms import dqn
from agents.algorithms.buffer import Batch
from agents.algorithms.dqn import STAGGER_ENVS, replay_buffer
from agents.algorithms.networks import settings_of
from agents.algorithms.teachers import LabelBuffer, check_teaching, make_teacher, policy_cross_entropy, state_of
from agents.algorithms.warm_start import check_start, load_start
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import OurDQNConfig, Teaching, key
from agents.environments.steps import Step
from agents.session.contract import AlgorithmModule
from agents.session.hooks import Hooks, HooksAround
from agents.session.progress import Progress, linear_epsilon

__all__ = ["STAGGER_ENVS", "Agent", "learn", "replay_buffer", "settings"]

#: Labelled frames kept at most: the teacher's term samples the recent ones, as DAgger's buffer.
LABELS_KEPT = 100_000


@dataclass
class KickstartConfig(Teaching, OurDQNConfig):
    """Our DQN kickstarted (zoo_configs/kickstart.yml): the TD loss plus a
    teacher's term, its weight falling to 0, on a network that may start as a distilled student."""

    kickstart_weight: float = key(1.0, "the teacher term's weight beside the TD loss at the start", low=0)
    kickstart_fraction: float = key(
        0.5, "the share of the run over which the teacher term's weight falls linearly to 0", low=0, high=1, resumable=True
    )
    start_from: str = key(
        "", "a model file or run folder (a distilled student) whose network the run starts from; '': a new one"
    )


def settings(section: Section, observation_space: Any, action_space: Any) -> tuple[KickstartConfig, dict[str, Any]]:
    """DQN's config and network, the teacher checked, and the network to start from fitting this one."""
    config, spec = settings_of(KickstartConfig, section, observation_space, action_space)
    check_teaching(config, section, action_space)
    if config.start_from:
        check_start(config.start_from, spec)
    return config, spec


class KickstartAgent(dqn.DQNAgent):
    """Our DQN agent with a teacher's term in its loss, and its labels."""

    FORMAT = "ballenvs-custom-kickstart/1"  # of its checkpoints
    INEXACT_RESUME = "the teacher's labels and generators are not saved"

    def __init__(self, spec: dict[str, Any], config: KickstartConfig, device: str, seed: int = 0, **options: Any) -> None:
        super().__init__(spec, config, device, seed, **options)  # amp, compile: DQN's
        if config.start_from:
            load_start(self.q, config.start_from)
            self.target.load_state_dict(self.q.state_dict())
        self.teacher = make_teacher(config, device, seed)
        self.weight = config.kickstart_weight  # the teacher term's, now
        self.labels: LabelBuffer | None = None  # made by learn, sized as the replay buffer

    def loss(self, batch: Batch) -> torch.Tensor:
        loss = self.td_loss(batch)
        if self.weight > 0 and self.labels is not None and len(self.labels):
            observations, targets = self.labels.sample(len(batch.actions))
            with self._autocast():
                logits = self._q_fn(observations).float()
            loss = loss + self.weight * policy_cross_entropy(logits / self.config.temperature, targets)
        return loss


Agent = KickstartAgent


def kickstart_weight(config: KickstartConfig, progress: Progress) -> float:
    return linear_epsilon(
        progress.num_timesteps, progress.exploration_horizon, config.kickstart_weight, 0.0, config.kickstart_fraction
    )


class LabelledSteps:
    """The training envs, with every frame the agent acts on labelled by the teacher while its
    term counts; DQN's loop steps these as it steps any envs."""

    def __init__(self, env: Any, agent: KickstartAgent) -> None:
        self.env, self.agent = env, agent
        self.num_envs, self.observation_space, self.action_space = env.num_envs, env.observation_space, env.action_space
        self._observations: Any = None
        self._states = np.zeros((0, 0))  # until reset

    def first_observations(self) -> Any:
        self._observations = self.env.first_observations()
        self._states = state_of(self.env.reset_info)
        self.agent.teacher.reset(np.ones(self.num_envs, dtype=bool))
        return self._observations

    def step(self, actions: np.ndarray) -> Step:
        agent = self.agent
        if agent.weight > 0 and agent.labels is not None:
            teacher_actions, targets = agent.teacher.label(self._states)
            agent.labels.add(self._observations, targets, teacher_actions)
        step = self.env.step(actions)
        self._observations, self._states = step.observations, state_of(step.info)
        if step.ended.any():
            agent.teacher.reset(step.ended)
        return step

    def close(self) -> None:
        self.env.close()


class TeacherTerm(HooksAround):
    """The run's hooks, with the teacher term's weight set for the steps to come after each step."""

    def __init__(self, hooks: Hooks, agent: KickstartAgent) -> None:
        super().__init__(hooks)
        self.agent = agent

    def on_step(self, progress: Progress) -> bool:
        self.agent.weight = kickstart_weight(self.agent.config, progress)
        return self.hooks.on_step(progress)


def learn(
    agent: KickstartAgent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: Any, log_every_episodes: int = 4
) -> None:
    """DQN's loop (:func:`agents.algorithms.dqn.learn`) on envs whose frames the teacher labels."""
    if agent.labels is None:
        seed = int(agent.rng.integers(2**31))
        agent.labels = LabelBuffer(min(agent.config.buffer_size, LABELS_KEPT), env.observation_space, agent.device, seed)
    agent.weight = kickstart_weight(agent.config, progress)
    steps = LabelledSteps(env, agent)
    dqn.learn(agent, steps, progress, timesteps, TeacherTerm(hooks, agent), buffer, log_every_episodes)


if TYPE_CHECKING:  # mypy holds this module to the contract of an algorithm module
    from agents.algorithms import kickstart as _this_module

    _: AlgorithmModule = _this_module
