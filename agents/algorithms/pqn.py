"""PQN (Gallici et al., "Simplifying Deep Temporal Difference Learning", ICLR 2025), in one file:
Q-learning without a replay buffer or a target network.

Many vectorised envs collect a short rollout, acting for all of them with one forward pass of
a Q-network whose hidden layers carry a LayerNorm (which keeps TD learning stable without a
target network); Q(lambda) targets are computed over the rollout in one backward sweep; a few
epochs of minibatch updates follow, and the rollout is thrown away. Hyperparameters come from
``zoo_configs/pqn.yml`` (ours: the RL Zoo does not read it).

The rollouts, their loop and how an episode's end inside one is read are
:mod:`agents.algorithms.rollouts`' (our PPO learns from the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.algorithms import rollouts
from agents.algorithms.networks import settings_of
from agents.algorithms.qlearner import QLearner
from agents.algorithms.rollouts import STAGGER_ENVS, KeptRollout, Rollout, check_minibatches, replay_buffer
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import PQNConfig
from agents.common.tensors import rows_of
from agents.session.contract import AlgorithmModule
from agents.session.hooks import Hooks
from agents.session.progress import Progress

__all__ = ["STAGGER_ENVS", "Agent", "learn", "replay_buffer", "settings"]


def settings(section: Section, observation_space: Any, action_space: Any) -> tuple[PQNConfig, dict[str, Any]]:
    """The agent's hyperparameters and network spec: LayerNorm on unless ``policy_kwargs`` says otherwise."""
    config, spec = settings_of(PQNConfig, section, observation_space, action_space, layer_norm=True)
    check_minibatches(config, section)
    return config, spec


def q_lambda_targets(
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    ended: torch.Tensor,
    next_values: torch.Tensor,
    gamma: float,
    q_lambda: float,
) -> torch.Tensor:
    """Q(lambda) targets of a (T, N) rollout, in one backward sweep:

        G_t = r_t + gamma * (1 - terminated_t) * (V'_t + lambda * c_t * (G_{t+1} - V'_t))

    with V'_t = max_a Q(s'_t, a) the value of the step's real next observation, and c_t = 0 where
    the episode ended (terminated or truncated) or the rollout does (there G_t bootstraps on V'_t
    alone), else 1. lambda = 0 gives one-step Q-learning targets, lambda = 1 Monte Carlo returns
    bootstrapped at the rollout's end.
    """
    returns = torch.empty_like(rewards)
    following = next_values[-1]  # unused at the last step, where c_t = 0
    for t in reversed(range(rewards.shape[0])):
        carry = 0.0 if t == rewards.shape[0] - 1 else q_lambda * (1.0 - ended[t])
        blend = next_values[t] + carry * (following - next_values[t])
        returns[t] = rewards[t] + gamma * (1.0 - terminated[t]) * blend
        following = returns[t]
    return returns


class PQNAgent(QLearner):
    """A LayerNorm Q-network, its optimiser, epsilon-greedy acting, and the rollout it fills.
    ``config``: a :class:`PQNConfig`."""

    FORMAT = "ballenvs-custom-pqn/1"

    def __init__(
        self, spec: dict[str, Any], config: PQNConfig, device: str, seed: int = 0, amp: bool = False, compile: bool = False
    ) -> None:
        super().__init__(spec, config, device, seed, amp, compile)
        self.kept = KeptRollout(Rollout, seed)

    def rollout_for(self, steps: int, n_envs: int, observation_space: Any) -> Rollout:
        return self.kept.rollout_for(steps, n_envs, observation_space, self.device)

    def runtime_state(self) -> dict[str, Any]:
        return {**super().runtime_state(), **self.kept.get_state()}

    def load_runtime_state(self, state: dict[str, Any]) -> None:
        super().load_runtime_state(state)
        self.kept.set_state(state)

    def act(self, observation: Any, epsilon: float) -> tuple[np.ndarray, torch.Tensor]:
        """Epsilon-greedy actions for a batch, and each observation's value max_a Q(s, a), from one forward pass."""
        with torch.inference_mode(), self._autocast():
            best, greedy = self._q_fn(observation).float().max(dim=1)
        return self.explore(greedy.cpu().numpy(), epsilon), best

    def play(self, rollout: Rollout, t: int, observation: Any, epsilon: float) -> np.ndarray:
        """The actions for step ``t`` of ``rollout``, its observations and what the targets need stored."""
        actions, rollout.values[t] = self.act(rollout.store_observation(t, observation), epsilon)
        return actions

    def values(self, observation: Any) -> torch.Tensor:
        with torch.inference_mode(), self._autocast():
            return self._q_fn(observation).float().max(dim=1).values

    def learn_rollout(
        self, rollout: Rollout, observation: Any, stop_asked: Callable[[], bool] = rollouts.never
    ) -> torch.Tensor | None:
        """The updates on a full rollout (``observation``: the envs' after it). Returns the last loss;
        None, the agent as before them, where a stop was asked for inside them."""
        config = self.config
        next_values = rollouts.next_values(self, rollout, observation)
        returns = q_lambda_targets(
            rollout.rewards, rollout.terminated, rollout.ended, next_values, config.gamma, config.q_lambda
        )
        return rollouts.update_or_undo(self, lambda: self.update(rollout, returns, stop_asked))

    def update(self, rollout: Rollout, returns: torch.Tensor, stop_asked: Callable[[], bool] = rollouts.never) -> torch.Tensor:
        """``n_epochs`` passes over the rollout in ``n_minibatches`` shuffled minibatches, each
        one gradient step on the squared error to the Q(lambda) targets. Returns the last loss."""
        config = self.config
        observations, actions, targets = rollout.flat(), rollout.actions.flatten(), returns.flatten()
        loss = torch.zeros((), device=self.device)
        for _ in range(config.n_epochs):
            order = torch.randperm(len(targets), generator=self.kept.generator).to(self.device)
            for batch in order.tensor_split(config.n_minibatches):
                rollouts.check_stop(stop_asked)
                with self._autocast():
                    q_taken = (
                        self._q_fn(rows_of(observations, batch)).float().gather(1, actions[batch].unsqueeze(1)).squeeze(1)
                    )
                loss = F.mse_loss(q_taken, targets[batch])
                self.gradient_step(loss)
        return loss.detach()


Agent = PQNAgent


def learn(agent: PQNAgent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: None = None) -> None:
    """The rollouts' loop (:func:`agents.algorithms.rollouts.learn`) with PQN's acting and updates."""
    rollouts.learn(agent, env, progress, timesteps, hooks)


if TYPE_CHECKING:  # mypy holds this module to the contract of an algorithm module
    from agents.algorithms import pqn as _this_module

    _: AlgorithmModule = _this_module
