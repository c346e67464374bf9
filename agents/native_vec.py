"""stable-baselines3's ``VecEnv`` interface over a ballenvs native vector env.

The native vector envs (``gym.make_vec(..., vectorization_mode="vector_entry_point")``) step
all games in one batched call. SB3 expects its own contract: a finished env is reset within
the same step, its last observation is in ``info["terminal_observation"]``, time-limit ends
are flagged in ``info["TimeLimit.truncated"]``, and infos come as one dict per env. This
adapter asks the vector env for SAME_STEP autoreset and translates the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from ballenvs.vector import BatchedVectorEnv


def make_native(env_id: str, num_envs: int, env_kwargs: dict[str, Any]) -> NativeVecEnv:
    venv = gym.make_vec(
        f"ballenvs:{env_id}",
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.SAME_STEP,
        **env_kwargs,
    )
    return NativeVecEnv(venv.unwrapped)


def _item(value: Any) -> Any:
    """A per-env info value as the single env gives it: Python scalars, tuples for rows."""
    if isinstance(value, np.ndarray):
        return tuple(value.tolist())
    return value.item() if isinstance(value, np.generic) else value


def _index(observation: Any, i: int) -> Any:
    return {key: value[i] for key, value in observation.items()} if isinstance(observation, dict) else observation[i]


class NativeVecEnv(VecEnv):
    """An SB3 ``VecEnv`` over a :class:`ballenvs.vector.BatchedVectorEnv` in SAME_STEP mode."""

    def __init__(self, venv: BatchedVectorEnv) -> None:
        if venv.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"NativeVecEnv needs autoreset_mode=SAME_STEP, got {venv.autoreset_mode}")
        self.venv = venv  # before VecEnv.__init__, which asks for render_mode through get_attr
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> VecEnvObs:
        seeds = self._seeds if any(seed is not None for seed in self._seeds) else None
        observation, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        return observation

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        observation, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [
            {"TimeLimit.truncated": bool(truncated[i] and not terminated[i])} for i in range(self.num_envs)
        ]
        for key, values in info.items():
            if key.startswith("_") or key == "final_obs":
                continue
            present = info.get(f"_{key}", np.ones(self.num_envs, dtype=bool))
            for i in np.flatnonzero(present):
                infos[i][key] = _item(values[i])
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = _index(info["final_obs"], i)
        return observation, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def _count(self, indices: VecEnvIndices) -> int:
        return len(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self.venv, attr_name)] * self._count(indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        return [getattr(self.venv, method_name)(*method_args, **method_kwargs)] * self._count(indices)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * self._count(indices)

    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.venv.render() or []
        return list(frames) + [None] * (self.num_envs - len(frames))
