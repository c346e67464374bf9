"""The training envs as our loops consume them, batched: each step's true next observations and
the episodes that finished come out of arrays, with no dict per env per step (:class:`Step`).
The native vector envs are read directly (:class:`NativeSteps`, their frames stacked by
:class:`StackedSteps`); any other vector env through stable-baselines3's ``VecEnv``
(:class:`VecEnvSteps`). :func:`make_steps` picks.
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.monitor import ResultsWriter
from stable_baselines3.common.preprocessing import is_image_space, is_image_space_channels_first
from stable_baselines3.common.vec_env import VecEnv

from agents.environments.envs import make_vec
from agents.environments.frames import FrameStack, stacked_space
from agents.environments.vec_env import make_native, true_next_observations
from ballenvs.state import fitting, parts


class Step(NamedTuple):
    observations: Any  # to act on next: a finished env's are its next episode's first
    next_observations: Any  # this step's transitions' true next observations
    rewards: np.ndarray
    terminated: np.ndarray  # ended for real, not by a time limit
    ended: np.ndarray  # terminated or truncated
    episodes: list[tuple[float, int]]  # (return, length) of each episode that finished
    # The native env's info (arrays over the envs; a finished env's is its next episode's
    # first), for a learner that reads more than the observation (info["state"]); None elsewhere.
    info: dict[str, Any] | None = None


class VecEnvSteps:
    """An SB3 VecEnv (in a VecMonitor) as the loop consumes it."""

    def __init__(self, env: VecEnv) -> None:
        self.env = env
        self.num_envs, self.observation_space, self.action_space = env.num_envs, env.observation_space, env.action_space

    def reset(self) -> Any:
        return self.env.reset()

    def first_observations(self) -> Any:
        """A reset's: games in other processes (or other vector envs) cannot be saved in progress."""
        return self.reset()

    @property
    def reset_info(self) -> dict[str, Any]:
        """The last reset's info, as the native env gives it (:func:`stacked_arrays`)."""
        return stacked_arrays(self.env.unwrapped.reset_infos)

    def get_state(self) -> None:
        return None

    def step(self, actions: np.ndarray) -> Step:
        observations, rewards, dones, infos = self.env.step(actions)
        truncated = np.array([info.get("TimeLimit.truncated", False) for info in infos])
        episodes = [
            (info["episode"]["r"], info["episode"]["l"]) for done, info in zip(dones, infos) if done and "episode" in info
        ]
        # As the native env's: a finished env's info is its next episode's first (the VecEnv reset it).
        restarted = self.env.unwrapped.reset_infos
        info = stacked_arrays([restarted[i] if done else each for i, (done, each) in enumerate(zip(dones, infos))])
        return Step(
            observations,
            real_next_observations(observations, dones, infos),
            rewards,
            dones & ~truncated,
            dones,
            episodes,
            info,
        )

    def close(self) -> None:
        self.env.close()


def stacked_arrays(infos: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The arrays every env's info holds under the same key (the games' ``state``), stacked over
    the envs as a native vector env gives them."""
    shared = set.intersection(*(set(info) for info in infos)) if infos else set()
    return {key: np.stack([info[key] for info in infos]) for key in shared if isinstance(infos[0][key], np.ndarray)}


def real_next_observations(next_obs: Any, dones: np.ndarray, infos: list[dict]) -> Any:
    """The vector env resets finished envs at once and returns the first observation of the
    next episode; the transition's true next observation is in ``terminal_observation``."""
    done_envs = np.flatnonzero(dones)
    if not len(done_envs):
        return next_obs
    if isinstance(next_obs, dict):
        real = {key: value.copy() for key, value in next_obs.items()}
        for i in done_envs:
            for key in real:
                real[key][i] = infos[i]["terminal_observation"][key]
        return real
    real = next_obs.copy()
    for i in done_envs:
        real[i] = infos[i]["terminal_observation"]
    return real


class NativeSteps:
    """A ballenvs vector env in SAME_STEP autoreset mode, consumed directly. Episodes are
    counted here and written to ``<monitor_dir>/native.monitor.csv`` as SB3's VecMonitor would.

    ``stagger``: end each env's first episode after a random number of steps up to the time
    limit (a truncation, as the time limit's own). Envs whose episodes all last the time limit
    (UAVGrid's) would otherwise stay in step forever, and a short rollout of all of them would
    hold one phase of the episode only: learners without a replay buffer (PQN) see the phases
    one after another instead of mixed.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any],
        n_envs: int,
        seed: int | None,
        monitor_dir: str | None = None,
        stagger: bool = False,
    ) -> None:
        self.env = make_native(env_id, n_envs, env_kwargs)
        self.num_envs, self.observation_space, self.action_space = (
            n_envs,
            self.env.single_observation_space,
            self.env.single_action_space,
        )
        self._seed = seed
        self._returns, self._lengths = np.zeros(n_envs), np.zeros(n_envs, dtype=np.int64)
        self._stagger = stagger and self.env.max_episode_steps is not None
        self._first_ends = np.zeros(n_envs, dtype=np.int64)  # step at which each first episode ends; 0: none
        self._start = time.time()
        self.reset_info: dict[str, Any] = {}  # the last reset's info
        self.restored = False  # set_state put games in progress here: the first observations are theirs
        self._writer = None
        if monitor_dir is not None:
            os.makedirs(monitor_dir, exist_ok=True)
            self._writer = ResultsWriter(
                os.path.join(monitor_dir, "native"), header={"t_start": self._start, "env_id": env_id}
            )

    def reset(self) -> Any:
        observations, self.reset_info = self.env.reset(seed=self._seed)
        limit = self.env.max_episode_steps
        if self._stagger and limit is not None:
            # Drawn from the first env's generator, which the env seeded: reproducible.
            self._first_ends = self.env.np_random[0].integers(1, limit + 1, size=self.num_envs)
        self._seed = None  # later resets continue each env's generator
        self._returns[:], self._lengths[:] = 0.0, 0
        return observations

    def first_observations(self) -> Any:
        """What a loop acts on first: a reset's observations, or after :meth:`set_state` the
        current ones of the games restored in progress (their state in :attr:`reset_info`)."""
        if not self.restored:
            return self.reset()
        self.restored = False
        self.reset_info = self.env.game.reset_info()  # the state of the games as they are now
        return self.env.game.observe()

    def get_state(self) -> dict[str, Any] | None:
        """The games in progress (:meth:`ballenvs.faces.GameVectorEnv.get_state`) and this wrapper's
        counts; None for a game that cannot save its games (:meth:`ballenvs.game.Game.get_state`)."""
        try:
            games = self.env.get_state()
        except NotImplementedError:
            return None
        return {
            "env": games,
            "returns": self._returns.copy(),
            "lengths": self._lengths.copy(),
            "first_ends": self._first_ends.copy(),
            "seed": self._seed,
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`get_state`'s state: the next :meth:`first_observations` does not reset."""
        state = parts(state, ("env", "returns", "lengths", "first_ends", "seed"), "training envs")
        returns, lengths = (
            fitting(self._returns, state["returns"], "returns"),
            fitting(self._lengths, state["lengths"], "lengths"),
        )
        first_ends = fitting(self._first_ends, state["first_ends"], "first_ends")
        if state["seed"] is not None:
            raise ValueError(f"state seed: expected None (the envs were reset), got {state['seed']!r:.80}")
        self.env.set_state(state["env"])
        self._returns, self._lengths, self._first_ends, self._seed = returns, lengths, first_ends, None
        self.restored = True

    def step(self, actions: np.ndarray) -> Step:
        observations, rewards, terminated, truncated, info = self.env.step(actions)
        next_observations = true_next_observations(observations, info)
        if self._stagger:
            cut = (self._lengths + 1 == self._first_ends) & ~(terminated | truncated)
            if cut.any():  # these envs' first episodes end here, as if their time limit had come
                info = with_final_info(info, cut)
                observations, restarted = self.env.reset(options={"reset_mask": cut})
                for key in info.keys() & restarted.keys():  # the restarted envs' infos are their new episodes'
                    if not key.startswith("_") and isinstance(info[key], np.ndarray):
                        info[key] = np.where(cut.reshape(-1, *(1,) * (info[key].ndim - 1)), restarted[key], info[key])
                truncated = truncated | cut
                self._first_ends[cut] = 0
        ended = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        if not ended.any():
            return Step(observations, next_observations, rewards, terminated, ended, [], info)
        episodes = []
        for i in np.flatnonzero(ended):
            episodes.append((float(self._returns[i]), int(self._lengths[i])))
            if self._writer is not None:
                self._writer.write_row(
                    {"r": round(episodes[-1][0], 6), "l": episodes[-1][1], "t": round(time.time() - self._start, 6)}
                )
        self._returns[ended], self._lengths[ended] = 0.0, 0
        return Step(observations, next_observations, rewards, terminated, ended, episodes, info)

    def close(self) -> None:
        self.env.close()
        if self._writer is not None:
            self._writer.close()


def with_final_info(info: dict[str, Any], ended: np.ndarray) -> dict[str, Any]:
    """``info`` with the values of the ``ended`` envs kept as their ``final_info``, as a SAME_STEP
    vector env keeps those of the envs it reset (a learner that reads the state needs the last one)."""
    final = dict(info.get("final_info", {}))
    for key, value in info.items():
        if key.startswith(("_", "final_")) or not isinstance(value, np.ndarray):
            continue
        earlier = final.get(key)
        mask = ended.reshape(-1, *(1,) * (value.ndim - 1))
        final[key] = value.copy() if earlier is None else np.where(mask, value, earlier)
    return {**info, "final_info": final, "_final_info": info.get("_final_info", np.zeros_like(ended)) | ended}


class StackedSteps:
    """Native steps with each env's last ``k`` observations stacked (:class:`agents.environments.frames.FrameStack`):
    the observations SB3's VecFrameStack and VecTransposeImage would give, with no dict per env."""

    def __init__(self, steps: NativeSteps, k: int) -> None:
        assert isinstance(steps.observation_space, spaces.Box)  # make_steps stacks only boxes
        self.steps, self.frames = steps, FrameStack(k)
        self.num_envs, self.action_space = steps.num_envs, steps.action_space
        self.observation_space = stacked_space(steps.observation_space, k)

    def reset(self) -> np.ndarray:
        self.frames.reset(None)
        return self.frames.push(self.steps.reset())

    def first_observations(self) -> np.ndarray:
        """A reset's stacks, or after :meth:`set_state` the restored ones."""
        if not self.steps.restored:
            return self.reset()
        self.steps.first_observations()
        return self.frames.view()

    def get_state(self) -> dict[str, Any] | None:
        games = self.steps.get_state()
        return None if games is None else {"steps": games, "frames": self.frames.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("steps", "frames"), "stacked envs")
        self.frames.set_state(state["frames"])
        frame = self.steps.observation_space
        assert isinstance(frame, spaces.Box)  # make_steps stacks only boxes
        expected = (self.num_envs, *frame.shape[:-1], frame.shape[-1] * self.frames.k)
        dtype, stack = frame.dtype, self.frames.stack
        if stack is None or stack.shape != expected or stack.dtype != dtype:
            raise ValueError(f"state frames: expected {dtype} stacks of shape {expected}")
        self.steps.set_state(state["steps"])

    @property
    def reset_info(self) -> dict[str, Any]:
        return self.steps.reset_info

    def step(self, actions: np.ndarray) -> Step:
        step = self.steps.step(actions)
        # Every env's true next stack; an env that ended then starts again from its reset observation.
        next_observations = self.frames.push(step.next_observations)
        observations = self.frames.restart(step.ended, step.observations) if step.ended.any() else next_observations
        return step._replace(observations=observations, next_observations=next_observations)

    def close(self) -> None:
        self.steps.close()


def channels_last_image(space: spaces.Space) -> bool:
    """An image whose channels come last (the networks take them first)."""
    return isinstance(space, spaces.Box) and is_image_space(space) and not is_image_space_channels_first(space)


def make_steps(
    env_id: str,
    env_kwargs: dict[str, Any],
    n_envs: int,
    seed: int | None,
    vec_env: str,
    frame_stack: int | None,
    monitor_dir: str | None = None,
    stagger: bool = False,
) -> VecEnvSteps | NativeSteps | StackedSteps:
    """The training envs of a run: native ones directly (their frames stacked by
    :class:`StackedSteps`), the others through :func:`agents.environments.envs.make_vec`."""
    if vec_env == "native":
        steps = NativeSteps(env_id, env_kwargs, n_envs, seed, monitor_dir, stagger)
        if not frame_stack and not channels_last_image(steps.observation_space):
            return steps
        if isinstance(steps.observation_space, spaces.Box) and frame_stack and frame_stack > 1:
            return StackedSteps(steps, frame_stack)
        # A Dict observation, a "stack" of 1 or unstacked channels-last images (which SB3's wrappers transpose): theirs.
        steps.close()
    return VecEnvSteps(make_vec(env_id, env_kwargs, n_envs, seed, vec_env, frame_stack, monitor_dir))
