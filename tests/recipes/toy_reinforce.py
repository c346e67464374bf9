"""A new algorithm that is not Q-learning, through the same recipe: REINFORCE (Williams, 1992), the
policy a softmax over the network's scores, updated at the end of each env's episode by its
discounted returns. The network's scores are its action preferences, so playing by their argmax
(what the loaders and the exported model do) plays its most likely action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.algorithms.qlearner import QLearner
from agents.common.configuration.hyperparameters import QConfig
from agents.common.tensors import rows_of, to_tensor
from agents.session.hooks import EpisodeLog, Hooks
from agents.session.progress import Progress


@dataclass
class Config(QConfig):
    """The learning rate, gamma and gradient clipping of every learner; it explores by sampling."""


class Agent(QLearner):
    FORMAT = "toy-reinforce/1"

    def log_probs(self, observation: Any) -> torch.Tensor:
        return torch.log_softmax(self.q(to_tensor(observation, self.device)), dim=1)

    def act(self, observation: Any) -> np.ndarray:
        """Actions sampled from the softmax policy."""
        with torch.no_grad():
            return torch.multinomial(self.log_probs(observation).exp(), 1).squeeze(1).cpu().numpy()


def learn(agent: Agent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: None = None) -> None:
    log, end = EpisodeLog(hooks, progress.num_timesteps), progress.num_timesteps + timesteps
    observation = env.reset()
    # Each env's episode so far: its observations, actions and rewards, scored once it ends.
    episodes: list[list[tuple[Any, int, float]]] = [[] for _ in range(env.num_envs)]
    while progress.num_timesteps < end:
        actions = agent.act(observation)
        step = env.step(actions)
        loss = None
        for i in range(env.num_envs):
            episodes[i].append((rows_of(observation, [i]), int(actions[i]), float(step.rewards[i])))
            if step.ended[i]:
                loss = episode_loss(agent, episodes[i])
                agent.gradient_step(loss)
                episodes[i] = []
        observation = step.observations
        progress.num_timesteps += env.num_envs
        log.add(progress, step.episodes, None if loss is None else loss.detach())
        if not hooks.on_step(progress):
            break


def episode_loss(agent: Agent, episode: list[tuple[Any, int, float]]) -> torch.Tensor:
    """REINFORCE's loss for one episode: -sum log pi(a_t | s_t) (G_t - mean G)."""
    returns, running = [], 0.0
    for *_, reward in reversed(episode):
        running = reward + agent.config.gamma * running
        returns.append(running)
    returns_t = torch.tensor(returns[::-1], dtype=torch.float32, device=agent.device)
    observations = [row for row, _, _ in episode]
    batch = (
        {key: np.concatenate([row[key] for row in observations]) for key in observations[0]}
        if isinstance(observations[0], dict)
        else np.concatenate(observations)
    )
    actions = torch.tensor([action for _, action, _ in episode], device=agent.device)
    taken = agent.log_probs(batch).gather(1, actions[:, None]).squeeze(1)
    return -(taken * (returns_t - returns_t.mean())).sum()
