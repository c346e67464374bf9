"""A replay buffer of preallocated arrays: O(1) insertion of a whole vector-env step, one
vectorised gather per minibatch, observations kept in their own dtype (uint8 frames stay
uint8: 4x less memory than float32)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces

Observation = Any  # an array, or a dict of arrays for Dict spaces


class Batch(NamedTuple):
    observations: Any  # tensor or dict of tensors
    actions: torch.Tensor
    rewards: torch.Tensor
    next_observations: Any
    terminated: torch.Tensor  # 1.0 where the episode ended for real (not by a time limit)


def _parts(space: spaces.Space) -> dict[str, spaces.Space]:
    return dict(space.spaces) if isinstance(space, spaces.Dict) else {"": space}


class ReplayBuffer:
    """``capacity`` transitions in a ring; the oldest are overwritten once it is full."""

    def __init__(self, capacity: int, observation_space: spaces.Space, device: str | torch.device = "cpu", seed: int | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"buffer_size must be >= 1, got {capacity}")
        self.capacity = capacity
        self.device = torch.device(device)
        self._dict = isinstance(observation_space, spaces.Dict)
        self.observations = {k: np.zeros((capacity, *s.shape), dtype=s.dtype) for k, s in _parts(observation_space).items()}
        self.next_observations = {k: np.zeros_like(a) for k, a in self.observations.items()}
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=np.float32)
        self.pos = 0  # next slot to write
        self.size = 0  # slots written so far, up to capacity
        self.rng = np.random.default_rng(seed)
        # Pinned host memory makes the copy to the GPU asynchronous.
        self._pin = self.device.type == "cuda"

    def __len__(self) -> int:
        return self.size

    def add(self, obs: Observation, next_obs: Observation, actions: np.ndarray, rewards: np.ndarray, terminated: np.ndarray) -> None:
        """Store one transition per env: arrays with a leading (n_envs,) dimension."""
        n = len(actions)
        slots = (self.pos + np.arange(n)) % self.capacity
        for key, store in self.observations.items():
            store[slots] = obs[key] if self._dict else obs
        for key, store in self.next_observations.items():
            store[slots] = next_obs[key] if self._dict else next_obs
        self.actions[slots] = actions
        self.rewards[slots] = rewards
        self.terminated[slots] = terminated
        self.pos = (self.pos + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def sample(self, batch_size: int) -> Batch:
        """A uniform minibatch of written slots, as tensors on the buffer's device."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        idx = self.rng.integers(0, self.size, size=batch_size)
        return Batch(
            self._observation(self.observations, idx),
            self._tensor(self.actions[idx]),
            self._tensor(self.rewards[idx]),
            self._observation(self.next_observations, idx),
            self._tensor(self.terminated[idx]),
        )

    def _observation(self, stores: dict[str, np.ndarray], idx: np.ndarray) -> Any:
        parts = {key: self._tensor(store[idx]) for key, store in stores.items()}
        return parts if self._dict else parts[""]

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        tensor = torch.from_numpy(array)
        if self._pin:
            tensor = tensor.pin_memory()
        return tensor.to(self.device, non_blocking=True)

    def save(self, path: str | Path) -> None:
        """Write the filled part as an .npz (no pickle), to reload on resume."""
        arrays = {"actions": self.actions, "rewards": self.rewards, "terminated": self.terminated}
        arrays |= {f"obs/{k}": a for k, a in self.observations.items()}
        arrays |= {f"next_obs/{k}": a for k, a in self.next_observations.items()}
        with open(path, "wb") as file:
            np.savez(file, pos=self.pos, size=self.size, **{k: v[: self.size] for k, v in arrays.items()})

    def load(self, path: str | Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            size = int(data["size"])
            if size > self.capacity:
                raise ValueError(f"replay buffer {str(path)!r} holds {size} transitions, more than buffer_size={self.capacity}")
            for name, store in [("actions", self.actions), ("rewards", self.rewards), ("terminated", self.terminated)]:
                store[:size] = data[name]
            for key in self.observations:
                self.observations[key][:size] = data[f"obs/{key}"]
                self.next_observations[key][:size] = data[f"next_obs/{key}"]
            self.size, self.pos = size, int(data["pos"]) % self.capacity
