"""A new algorithm, as CONTRIBUTING's recipe adds one: online one-step Q-learning (no replay buffer,
no target network) on each vector step's transitions. Not a good learner: the test only shows
that a module, a registry entry and a config file are all it takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.algorithms.qlearner import QLearner
from agents.common.configuration.hyperparameters import QConfig
from agents.common.tensors import to_tensor
from agents.session.hooks import EpisodeLog, Hooks
from agents.session.progress import Progress


@dataclass
class Config(QConfig):
    """Only the keys every Q-learner has."""


class Agent(QLearner):
    FORMAT = "toy-online-q/1"

    def act(self, observation: Any, epsilon: float) -> np.ndarray:
        with torch.inference_mode():
            greedy = self.q(to_tensor(observation, self.device)).argmax(dim=1).cpu().numpy()
        return self.explore(greedy, epsilon)


def learn(agent: Agent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: None = None) -> None:
    log, end = EpisodeLog(hooks, progress.num_timesteps), progress.num_timesteps + timesteps
    observation = env.reset()
    while progress.num_timesteps < end:
        actions = agent.act(observation, progress.epsilon(agent.config))
        step = env.step(actions)
        with torch.no_grad():
            next_values = agent.q(to_tensor(step.next_observations, agent.device)).max(dim=1).values
            terminated = torch.as_tensor(step.terminated, dtype=torch.float32)
            targets = torch.as_tensor(step.rewards, dtype=torch.float32) + agent.config.gamma * (1 - terminated) * next_values
        q_taken = agent.q(to_tensor(observation, agent.device)).gather(1, torch.as_tensor(actions)[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q_taken, targets)
        agent.gradient_step(loss)
        observation = step.observations
        progress.num_timesteps += env.num_envs
        log.add(progress, step.episodes, loss.detach())
        if not hooks.on_step(progress):
            break
