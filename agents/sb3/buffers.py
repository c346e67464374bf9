"""Replay buffers stable-baselines3's DQN lacks: n-step returns on Dict observations, and random
shifts of sampled frames (DrQ).

stable-baselines3 2.x sums n-step returns (the ``n_steps`` key) for Box observations only and
asserts on Dict ones such as UAVGrid-v0's. This buffer fills that gap with the same sums the
custom agent's buffer makes (:func:`agents.common.nstep_returns.n_step_returns`), so that one config
section means the same to both trainers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.buffers import DictReplayBuffer, NStepReplayBuffer
from stable_baselines3.common.type_aliases import DictReplayBufferSamples, ReplayBufferSamples

from agents.common.networks.augment import draw_shifts, shift_images
from agents.common.nstep_returns import n_step_returns


class DictNStepReplayBuffer(DictReplayBuffer):
    """A DictReplayBuffer whose samples are n-step transitions, as SB3's NStepReplayBuffer's are."""

    def __init__(self, *args: Any, n_steps: int = 3, gamma: float = 0.99, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n_steps, self.gamma = n_steps, gamma

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> DictReplayBufferSamples:  # type: ignore[override]  # SB3's own Dict buffer returns these too
        envs = np.random.randint(0, self.n_envs, size=batch_inds.shape)
        rows = (batch_inds[:, None] + np.arange(self.n_steps)) % self.buffer_size  # the env's next steps
        stored_after = (self.pos - 1 - batch_inds) % self.buffer_size
        ended = (self.dones[rows, envs[:, None]] + self.timeouts[rows, envs[:, None]]) > 0
        rewards = self._normalize_reward(self.rewards[rows, envs[:, None]], env)
        last, returns, discounts = n_step_returns(rewards, ended, stored_after, self.gamma)
        last_rows = rows[np.arange(len(batch_inds)), last]
        # A time-limit end is not a termination: the target bootstraps through it.
        dones = self.dones[last_rows, envs] * (1.0 - self.timeouts[last_rows, envs])
        obs: Any = self._normalize_obs({key: o[batch_inds, envs] for key, o in self.observations.items()}, env)
        next_obs: Any = self._normalize_obs({key: o[last_rows, envs] for key, o in self.next_observations.items()}, env)
        return DictReplayBufferSamples(
            observations={key: self.to_torch(o) for key, o in obs.items()},
            actions=self.to_torch(self.actions[batch_inds, envs]),
            next_observations={key: self.to_torch(o) for key, o in next_obs.items()},
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(returns.reshape(-1, 1)),
            discounts=self.to_torch(discounts.reshape(-1, 1)),
        )


class RandomShiftReplayBuffer(NStepReplayBuffer):
    """SB3's n-step buffer (``n_steps=1``: one-step samples) whose minibatches of frames are
    randomly shifted by up to ``pad`` pixels, a sample's observation and next observation alike
    (:mod:`agents.common.networks.augment`), the shifts drawn from numpy's global generator as SB3 draws
    its samples (so its seed decides them). What is stored is never shifted."""

    def __init__(self, *args: Any, pad: int = 4, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pad = pad

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> ReplayBufferSamples:
        samples = super()._get_samples(batch_inds, env)
        shifts = draw_shifts(None, len(batch_inds), self.pad)
        return samples._replace(
            observations=shift_images(samples.observations, shifts),
            next_observations=shift_images(samples.next_observations, shifts),
        )
