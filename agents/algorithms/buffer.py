"""A replay buffer of preallocated arrays: O(1) insertion of a whole vector-env step, one
vectorised gather per minibatch, observations kept in their own dtype (uint8 frames stay
uint8: 4x less memory than float32)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces

from agents.artifacts.runs import atomic_path
from agents.common.errors import UsageError
from agents.common.nstep_returns import n_step_returns
from agents.common.readers import count, npz_arrays
from agents.common.tensors import observation_parts, torch_dtype
from ballenvs.state import generator_state, set_generator_state

Observation = Any  # an array, or a dict of arrays for Dict spaces


class Batch(NamedTuple):
    observations: Any  # tensor or dict of tensors
    actions: torch.Tensor
    rewards: torch.Tensor
    next_observations: Any
    terminated: torch.Tensor  # 1.0 where the episode ended for real (not by a time limit)
    discounts: torch.Tensor | None = None  # n-step: gamma ** steps summed per sample; else None (gamma)


class _Ring:
    """What both replay buffers share: a ring of ``capacity`` slots, where the next transitions go
    (one per env, the same number at every add), how many are stored, and saving and loading the
    stored part as an .npz (no pickle). Subclasses keep the arrays: host or device memory.

    With ``n_steps`` > 1 a sample is an n-step transition, put together at sampling time as
    stable-baselines3's NStepReplayBuffer does: the discounted rewards of up to ``n_steps``
    consecutive steps of one env, stopping at the end of its episode (terminated or
    truncated) or at the newest step stored, and the observation after the last of them.
    """

    def __init__(
        self,
        capacity: int,
        observation_space: spaces.Space,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        n_steps: int = 1,
        gamma: float = 0.99,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"buffer_size must be >= 1, got {capacity}")
        if n_steps < 1:
            raise ValueError(f"n_steps must be >= 1, got {n_steps}")
        self.capacity, self.n_steps, self.gamma = capacity, n_steps, gamma
        self.device = torch.device(device)
        self._dict = isinstance(observation_space, spaces.Dict)
        self.parts = observation_parts(observation_space)
        self.stride = 0  # transitions per add (n_envs): the same env's next step is this many slots on
        self.pos = 0  # next slot to write
        self.size = 0  # slots written so far, up to capacity
        self.observations: dict[str, Any] = {}
        self.next_observations: dict[str, Any] = {}
        self.actions: Any = None
        self.rewards: Any = None
        self.terminated: Any = None
        self.episode_ended: Any = None  # terminated or truncated
        self._allocate(seed)

    def _allocate(self, seed: int | None) -> None:
        """Make the arrays of the ring, and the generator minibatches are drawn with."""
        raise NotImplementedError

    def __len__(self) -> int:
        return self.size

    def _claim_stride(self, n: int) -> int:
        """``n`` transitions go in: one per env, the same number at every add (n-step returns
        find an env's next step ``stride`` slots on)."""
        if self.stride and n != self.stride:
            raise ValueError(f"every add must hold one transition per env: {self.stride} before, {n} now")
        self.stride = n
        return n

    def _advance(self, n: int) -> None:
        self.pos = (self.pos + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def _stores(self) -> dict[str, Any]:
        """Every array of the ring, by its name in a saved file."""
        stores = {
            "actions": self.actions,
            "rewards": self.rewards,
            "terminated": self.terminated,
            "episode_ended": self.episode_ended,
        }
        stores |= {f"obs/{k}": a for k, a in self.observations.items()}
        return stores | {f"next_obs/{k}": a for k, a in self.next_observations.items()}

    def _to_host(self, store: Any) -> np.ndarray:
        raise NotImplementedError

    def _fill(self, store: Any, values: np.ndarray) -> None:
        raise NotImplementedError

    def sampler_state(self) -> Any:
        """The state of the generator minibatches are drawn with: a resume that goes on exactly
        draws the same minibatches from the buffer it reloads."""
        raise NotImplementedError

    def set_sampler_state(self, state: Any) -> None:
        raise NotImplementedError

    def save(self, path: str | Path) -> None:
        """Write the filled part as an .npz (no pickle), atomically, to reload on resume."""
        arrays: dict[str, Any] = {name: self._to_host(store[: self.size]) for name, store in self._stores().items()}
        with atomic_path(path) as tmp, open(tmp, "wb") as file:
            np.savez(file, pos=self.pos, size=self.size, stride=self.stride, **arrays)

    def load(self, path: str | Path, n_envs: int | None = None) -> None:
        """Refill from a file :meth:`save` wrote (read with ``allow_pickle=False``); its counters
        must fit this buffer and its arrays, each array the kind and shape of this buffer's, and
        (given ``n_envs``) its transitions one per env per step of that many envs."""
        what = f"replay buffer {str(path)!r}"
        stores = self._stores()
        data = npz_arrays(path, "replay buffer", ("pos", "size", "stride", *stores))
        size = count(_scalar(data["size"], what), f"{what}: size", 0, self.capacity)
        pos = count(_scalar(data["pos"], what), f"{what}: pos", 0, self.capacity - 1)
        stride = count(_scalar(data["stride"], what), f"{what}: stride", 0, self.capacity)
        if n_envs is not None and (stride, size > 0) not in ((n_envs, True), (0, False), (n_envs, False)):
            raise UsageError(f"{what}: stride {stride} with {size} transitions; this run adds {n_envs} a step (its n_envs)")
        for name, store in stores.items():
            stored, kind = data[name], self._to_host(store[:0])
            if stored.shape != (size, *kind.shape[1:]) or stored.dtype.kind != kind.dtype.kind:
                raise UsageError(
                    f"{what}: {name} holds {stored.dtype} {stored.shape}, this run's is {kind.dtype} {(size, *kind.shape[1:])}"
                )
        for name, store in stores.items():
            self._fill(store, data[name])
        self.size, self.pos, self.stride = size, pos, stride


def _scalar(array: np.ndarray, what: str) -> Any:
    if array.shape != () or array.dtype.kind not in "iu":
        raise UsageError(f"{what}: its counters must be integers, got {array.dtype} {array.shape}")
    return array.item()


class ReplayBuffer(_Ring):
    """The ring in host (numpy) arrays; minibatches are gathered there and copied to ``device``."""

    def _allocate(self, seed: int | None) -> None:
        capacity = self.capacity
        self.observations = {k: np.zeros((capacity, *(s.shape or ())), dtype=s.dtype) for k, s in self.parts.items()}
        self.next_observations = {k: np.zeros_like(a) for k, a in self.observations.items()}
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=np.float32)
        self.episode_ended = np.zeros(capacity, dtype=bool)
        self.rng = np.random.default_rng(seed)
        # Pinned host memory makes the copy to the GPU asynchronous.
        self._pin = self.device.type == "cuda"

    def add(
        self,
        obs: Observation,
        next_obs: Observation,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        episode_ended: np.ndarray | None = None,
    ) -> None:
        """Store one transition per env: arrays with a leading (n_envs,) dimension.
        ``episode_ended``: terminated or truncated (default: ``terminated``)."""
        n = self._claim_stride(len(actions))
        slots = (self.pos + np.arange(n)) % self.capacity
        for key, store in self.observations.items():
            store[slots] = obs[key] if self._dict else obs
        for key, store in self.next_observations.items():
            store[slots] = next_obs[key] if self._dict else next_obs
        self.actions[slots] = actions
        self.rewards[slots] = rewards
        self.terminated[slots] = terminated
        self.episode_ended[slots] = terminated if episode_ended is None else episode_ended
        self._advance(n)

    def sample(self, batch_size: int) -> Batch:
        """A uniform minibatch of written slots, as tensors on the buffer's device."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        idx = self.rng.integers(0, self.size, size=batch_size)
        if self.n_steps == 1:
            ends, rewards, discounts = idx, self.rewards[idx], None
        else:
            ends, rewards, discounts = self._n_step(idx)
        return Batch(
            self._observation(self.observations, idx),
            self._tensor(self.actions[idx]),
            self._tensor(rewards),
            self._observation(self.next_observations, ends),
            self._tensor(self.terminated[ends]),
            discounts,
        )

    def _n_step(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
        """For each start slot: the slot of the n-step transition's last step, the discounted
        reward sum, and gamma ** (steps summed)."""
        slots = (idx[:, None] + np.arange(self.n_steps) * self.stride) % self.capacity  # the same env's next steps
        stored_after = (self.pos - 1 - idx) % self.capacity // self.stride  # of its steps, stored since
        last, rewards, discounts = n_step_returns(self.rewards[slots], self.episode_ended[slots], stored_after, self.gamma)
        return slots[np.arange(len(idx)), last], rewards, self._tensor(discounts)

    def _observation(self, stores: dict[str, np.ndarray], idx: np.ndarray) -> Any:
        parts = {key: self._tensor(store[idx]) for key, store in stores.items()}
        return parts if self._dict else parts[""]

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        tensor = torch.from_numpy(array)
        if self.device.type == "cpu":  # already there: the minibatch's six arrays skip a call each
            return tensor
        if self._pin:
            tensor = tensor.pin_memory()
        return tensor.to(self.device, non_blocking=True)

    def _to_host(self, store: Any) -> np.ndarray:
        return store

    def _fill(self, store: Any, values: np.ndarray) -> None:
        store[: len(values)] = values

    def sampler_state(self) -> Any:
        return generator_state(self.rng)

    def set_sampler_state(self, state: Any) -> None:
        set_generator_state(self.rng, state, "replay buffer rng")


class DeviceReplayBuffer(_Ring):
    """The same ring of transitions, resident on a torch device (the GPU's memory): each vector
    step's transitions go in once, through a pinned host buffer, and minibatches are drawn and
    gathered on the device, so an update never waits for a copy from the host. Observations keep
    their dtype there too (uint8 frames). On the CPU the numpy :class:`ReplayBuffer` serves; this
    one runs there as well, which is how its tests run."""

    def _allocate(self, seed: int | None) -> None:
        capacity, device = self.capacity, self.device

        def zeros(shape: tuple[int, ...], dtype: Any) -> torch.Tensor:
            return torch.zeros((capacity, *shape), dtype=dtype, device=device)

        self.observations = {k: zeros(s.shape or (), torch_dtype(s.dtype)) for k, s in self.parts.items()}
        self.next_observations = {k: torch.zeros_like(a) for k, a in self.observations.items()}
        self.actions = zeros((), torch.int64)
        self.rewards = zeros((), torch.float32)
        self.terminated = zeros((), torch.float32)
        self.episode_ended = zeros((), torch.bool)
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(0 if seed is None else seed)
        self._upload = Uploader(device)

    def add(
        self,
        obs: Observation,
        next_obs: Observation,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        episode_ended: np.ndarray | None = None,
    ) -> None:
        n = self._claim_stride(len(actions))
        slots = (self.pos + torch.arange(n, device=self.device)) % self.capacity
        for stores, values in ((self.observations, obs), (self.next_observations, next_obs)):
            for key, store in stores.items():
                store[slots] = self._upload(values[key] if self._dict else values, key)
        ended = terminated if episode_ended is None else episode_ended
        for store, values, name in (
            (self.actions, actions, "actions"),
            (self.rewards, rewards, "rewards"),
            (self.terminated, terminated, "terminated"),
            (self.episode_ended, ended, "episode_ended"),
        ):
            store[slots] = self._upload(np.asarray(values, dtype=_numpy_dtype(store.dtype)), name)
        self._advance(n)

    def sample(self, batch_size: int) -> Batch:
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        idx = torch.randint(0, self.size, (batch_size,), generator=self.generator, device=self.device)
        if self.n_steps == 1:
            ends, rewards, discounts = idx, self.rewards[idx], None
        else:
            slots = (idx[:, None] + torch.arange(self.n_steps, device=self.device) * self.stride) % self.capacity
            stored_after = torch.div((self.pos - 1 - idx) % self.capacity, self.stride, rounding_mode="floor")
            last, rewards, discounts = n_step_returns(self.rewards[slots], self.episode_ended[slots], stored_after, self.gamma)
            ends = slots[torch.arange(batch_size, device=self.device), last]
        observations = {key: store[idx] for key, store in self.observations.items()}
        next_observations = {key: store[ends] for key, store in self.next_observations.items()}
        return Batch(
            observations if self._dict else observations[""],
            self.actions[idx],
            rewards,
            next_observations if self._dict else next_observations[""],
            self.terminated[ends],
            discounts,
        )

    def _to_host(self, store: Any) -> np.ndarray:
        return store.cpu().numpy()

    def _fill(self, store: Any, values: np.ndarray) -> None:
        store[: len(values)] = torch.as_tensor(values, device=self.device)

    def sampler_state(self) -> Any:
        return self.generator.get_state()

    def set_sampler_state(self, state: Any) -> None:
        try:
            self.generator.set_state(state)
        except (TypeError, RuntimeError) as error:
            raise ValueError(f"state replay buffer generator: not a torch generator's state ({error})") from None


def _numpy_dtype(dtype: torch.dtype) -> Any:
    return torch.zeros(0, dtype=dtype).numpy().dtype


class Uploader:
    """Host arrays to the device: through a pinned staging buffer per name, reused step after step
    (pinning fresh memory every step would cost more than the copy), so the copy runs
    asynchronously on a GPU. On the CPU the array is wrapped, not copied."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._staging: dict[str, torch.Tensor] = {}

    def __call__(self, array: np.ndarray, name: str = "") -> torch.Tensor:
        array = np.ascontiguousarray(array)
        if self.device.type != "cuda":
            return torch.from_numpy(array)
        staging = self._staging.get(name)
        if staging is None or staging.shape != array.shape or staging.dtype != torch_dtype(array.dtype):
            staging = self._staging[name] = torch.empty(array.shape, dtype=torch_dtype(array.dtype)).pin_memory()
        # The previous copy out of this staging buffer must be done before it is overwritten.
        torch.cuda.current_stream(self.device).synchronize()
        staging.numpy()[...] = array
        return staging.to(self.device, non_blocking=True)
