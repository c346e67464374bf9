"""Environments for training and evaluation, built the same way for every trainer.

Each env is a ``gym.make`` of a ballenvs id (rendering off), in a Monitor, vectorised in
process (DummyVecEnv), in worker processes (SubprocVecEnv) or by the env's own batched
vector env (native, through agents.environments.vec_env), then frame-stacked and transposed to
channel-first when the config asks for it, as the RL Zoo does.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.preprocessing import is_image_space, is_image_space_channels_first
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecFrameStack, VecMonitor, VecTransposeImage

import ballenvs  # noqa: F401  (registers the ids gym.spec and gym.make read)
from agents.common.errors import UsageError
from agents.environments.ids import VEC_ENVS
from agents.environments.vec_env import NativeVecEnv, make_native

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def resolve_vec_env(requested: str, env_id: str, n_envs: int) -> str:
    """``auto``: the env's own batched vector env when it registers one (one numpy call for all
    games), else worker processes for several envs and in-process for one."""
    if requested != "auto":
        return requested
    if gym.spec(env_id).vector_entry_point is not None:
        return "native"
    return "subproc" if n_envs > 1 else "dummy"


def make_env(env_id: str, in_worker: bool = False, **env_kwargs: Any) -> gym.Env:
    """One env, no rendering. ``in_worker``: this process only steps envs, so it keeps to one
    thread (torch, if the worker has loaded it, and any thread pool started after this) and
    leaves Ctrl-C to the trainer: a terminal sends SIGINT to the whole process group, and a
    worker that died of it would break the trainer's orderly stop."""
    if in_worker:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for var in _THREAD_VARS:
            os.environ[var] = "1"
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
    # "ballenvs:<id>" imports ballenvs first: a fresh worker process has an empty registry.
    return gym.make(f"ballenvs:{env_id}", **env_kwargs)


def make_vec(
    env_id: str,
    env_kwargs: dict[str, Any],
    n_envs: int,
    seed: int | None,
    vec_env: str = "dummy",
    frame_stack: int | None = None,
    monitor_dir: str | None = None,
) -> VecEnv:
    """``n_envs`` monitored envs, seeded seed, seed + 1, ..., frame-stacked and channel-first.

    ``vec_env``: "dummy" (in process, one env after the other), "subproc" (one worker
    process per env) or "native" (the env's own batched vector env, one call for all).
    """
    if vec_env not in VEC_ENVS:
        raise UsageError(f"unknown vec env {vec_env!r}; valid: {', '.join(VEC_ENVS)}")
    env: VecEnv
    if vec_env == "native":
        env = NativeVecEnv(make_native(env_id, n_envs, env_kwargs))
        env.seed(seed)
        if monitor_dir is not None:
            os.makedirs(monitor_dir, exist_ok=True)
        env = VecMonitor(env, os.path.join(monitor_dir, "native") if monitor_dir else None)
    else:
        subproc = vec_env == "subproc"
        env = make_vec_env(
            functools.partial(make_env, env_id, subproc),
            n_envs=n_envs,
            seed=seed,
            env_kwargs=env_kwargs,
            monitor_dir=monitor_dir,
            vec_env_cls=SubprocVecEnv if subproc else DummyVecEnv,
        )
    if frame_stack:
        env = VecFrameStack(env, frame_stack)
    space = env.observation_space
    if isinstance(space, spaces.Box) and is_image_space(space) and not is_image_space_channels_first(space):
        env = VecTransposeImage(env)
    return env


#: Episodes an evaluation plays at once (one forward pass for all of them).
EVAL_BATCH = 16


def make_eval_vec(env_id: str, env_kwargs: dict[str, Any], frame_stack: int | None, episodes: int) -> VecEnv:
    """Envs to play ``episodes`` evaluation episodes on, up to :data:`EVAL_BATCH` at a time; a
    rendered one plays one at a time (only the first env is drawn)."""
    n = 1 if env_kwargs.get("render_mode") else min(episodes, EVAL_BATCH)
    kind = "dummy" if n == 1 else resolve_vec_env("auto", env_id, n).replace("subproc", "dummy")
    return make_vec(env_id, env_kwargs, n, None, kind, frame_stack)


def probe_spaces(env_id: str, env_kwargs: dict[str, Any], frame_stack: int | None) -> tuple[spaces.Space, spaces.Space]:
    """The observation and action spaces a learner sees (frame-stacked, channel-first), from one
    env made to read them; bad env options fail here, in this process, as one line."""
    try:
        probe = make_vec(env_id, env_kwargs, 1, None, "dummy", frame_stack)
    except (ValueError, TypeError) as error:
        raise UsageError(f"{env_id} options {env_kwargs}: {error}") from None
    try:
        return probe.observation_space, probe.action_space
    finally:
        probe.close()
