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

from ballenvs.faces import GameVectorEnv


def make_native(env_id: str, num_envs: int, env_kwargs: dict[str, Any]) -> GameVectorEnv:
    """A ballenvs native vector env that resets finished envs within the step (SAME_STEP), as
    the trainers consume it: stable-baselines3 through :class:`NativeVecEnv`, the custom agent directly."""
    return gym.make_vec(  # type: ignore[return-value]  # the id's vector entry point makes a GameVectorEnv
        f"ballenvs:{env_id}",
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.SAME_STEP,
        **env_kwargs,
    )


def true_next_observations(observations: Any, info: dict[str, Any]) -> Any:
    """Every env's observation after this step's action: the returned batch, with the final
    observation of each env that ended (and was reset) put back in its place."""
    if "final_obs" not in info:
        return observations
    ended = np.flatnonzero(info["_final_obs"])
    final = info["final_obs"]
    if isinstance(observations, dict):
        real = {key: value.copy() for key, value in observations.items()}
        for key, value in real.items():
            value[ended] = np.stack([final[i][key] for i in ended])
        return real
    real = observations.copy()
    real[ended] = np.stack([final[i] for i in ended])
    return real


def _item(value: Any) -> Any:
    """A per-env info value as the single env gives it (numpy scalars as Python ones)."""
    return value.item() if isinstance(value, np.generic) else value


def _copy_infos(infos: list[dict[str, Any]], info: dict[str, Any], envs: np.ndarray) -> None:
    """Each env in ``envs`` gets the values that gymnasium's layout ``info`` holds for it."""
    for key, values in info.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        for i in np.flatnonzero(info[f"_{key}"] & envs):
            infos[i][key] = _item(values[i])


class NativeVecEnv(VecEnv):
    """An SB3 ``VecEnv`` over a ballenvs native vector env (:class:`ballenvs.faces.GameVectorEnv`) in SAME_STEP mode."""

    def __init__(self, venv: GameVectorEnv) -> None:
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
        # As DummyVecEnv: an env that ended reports its last step's info, not its reset's.
        _copy_infos(infos, info, ~dones)
        if "final_info" in info:
            _copy_infos(infos, info["final_info"], dones)
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = info["final_obs"][i]
        return observation, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def _count(self, indices: VecEnvIndices) -> int:
        return len(list(self._get_indices(indices)))

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
