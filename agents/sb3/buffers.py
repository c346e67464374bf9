"""n-step returns for stable-baselines3's DQN on Dict observations.

stable-baselines3 2.x sums n-step returns (the ``n_steps`` key) for Box observations only and
asserts on Dict ones such as UAVGrid-v0's. This buffer fills that gap with the same sums the
custom agent's buffer makes (:func:`agents.common.returns.n_step_returns`), so that one config
section means the same to both trainers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.buffers import DictReplayBuffer
from stable_baselines3.common.type_aliases import DictReplayBufferSamples

from agents.common.returns import n_step_returns


class DictNStepReplayBuffer(DictReplayBuffer):
    """A DictReplayBuffer whose samples are n-step transitions, as SB3's NStepReplayBuffer's are."""

    def __init__(self, *args: Any, n_steps: int = 3, gamma: float = 0.99, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n_steps, self.gamma = n_steps, gamma

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> DictReplayBufferSamples:
        envs = np.random.randint(0, self.n_envs, size=batch_inds.shape)
        rows = (batch_inds[:, None] + np.arange(self.n_steps)) % self.buffer_size  # the env's next steps
        stored_after = (self.pos - 1 - batch_inds) % self.buffer_size
        ended = (self.dones[rows, envs[:, None]] + self.timeouts[rows, envs[:, None]]) > 0
        rewards = self._normalize_reward(self.rewards[rows, envs[:, None]], env)
        last, returns, discounts = n_step_returns(rewards, ended, stored_after, self.gamma)
        last_rows = rows[np.arange(len(batch_inds)), last]
        # A time-limit end is not a termination: the target bootstraps through it.
        dones = self.dones[last_rows, envs] * (1.0 - self.timeouts[last_rows, envs])
        obs = self._normalize_obs({key: o[batch_inds, envs] for key, o in self.observations.items()}, env)
        next_obs = self._normalize_obs({key: o[last_rows, envs] for key, o in self.next_observations.items()}, env)
        return DictReplayBufferSamples(
            observations={key: self.to_torch(o) for key, o in obs.items()},
            actions=self.to_torch(self.actions[batch_inds, envs]),
            next_observations={key: self.to_torch(o) for key, o in next_obs.items()},
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(returns.reshape(-1, 1)),
            discounts=self.to_torch(discounts.reshape(-1, 1)),
        )
