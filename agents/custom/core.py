"""What our Q-learning agents (:mod:`agents.custom.dqn`, :mod:`agents.custom.pqn`) share with each
other and with their command line:

- :func:`settings`: the agent's config (a dataclass of :mod:`agents.common.hyperparameters`) and
  network spec from a checked config section;
- :class:`QLearner`: a Q-network and its optimiser on a device, seeded epsilon-greedy exploration,
  bf16 autocast and ``torch.compile`` where they pay (CUDA), the learning-rate schedule and the
  gradient step;
- :class:`Progress`, :class:`Hooks`, :class:`EpisodeLog`: a run's counters and schedules (saved in
  checkpoints), the milestones the command line fills in, the episode log;
- :func:`make_steps`: the training envs as a loop consumes them, batched: the true next
  observations and the finished episodes come out of arrays, with no dict per env per step.

An algorithm module (``dqn.py``, ``pqn.py``, or one registered in :mod:`agents.common.algorithms`)
is a :class:`CustomAlgorithm`; ``python -m agents.custom_train --algo NAME`` runs any of them.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.monitor import ResultsWriter
from stable_baselines3.common.vec_env import VecEnv

from agents.common.config import Section, parse_kwargs
from agents.common.envs import make_vec
from agents.common.errors import UsageError
from agents.common.frames import FrameStack, stacked_space
from agents.common.hyperparameters import QConfig
from agents.common.vec_env import make_native, true_next_observations
from agents.custom.networks import QNetwork, network_spec

# -- hyperparameters --------------------------------------------------------------------------------


def settings(
    config_class: type[QConfig], section: Section, observation_space: Any, action_space: Any, **policy_defaults: Any
) -> tuple[Any, dict[str, Any]]:
    """An agent's config and network spec from a (checked) config section and the spaces it will
    see; ``policy_defaults``: the algorithm's own ``policy_kwargs`` defaults (PQN's LayerNorm)."""
    policy_kwargs = {**policy_defaults, **parse_kwargs("policy_kwargs", section.algo_kwargs.get("policy_kwargs"))}
    names = {f.name for f in fields(config_class)} - {"policy_kwargs"}  # the network's, in the spec
    config = config_class(**{k: v for k, v in section.algo_kwargs.items() if k in names})
    return config, network_spec(observation_space, int(action_space.n), section.policy, policy_kwargs)


# -- the learner ------------------------------------------------------------------------------------


class QLearner:
    """A Q-network, Adam, and epsilon-greedy exploration; subclasses add their targets and updates.

    ``config`` has ``initial_learning_rate``, ``linear_learning_rate`` and ``max_grad_norm``."""

    def __init__(self, spec: dict[str, Any], config: Any, device: str, seed: int, amp: bool, compile: bool) -> None:
        torch.manual_seed(seed)
        self.spec, self.config, self.device = spec, config, torch.device(device)
        self.q = QNetwork(spec).to(self.device)
        # One fused kernel for all parameters: measured 10x faster than the default per-tensor
        # loop on CPU for the Nature CNN (0.3 ms against 3.2 ms a step); CleanRL's PQN uses
        # RAdam, whose per-tensor loop took a third of an update's time here.
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=config.initial_learning_rate, fused=True)
        self._parameters = list(self.q.parameters())  # walked every update by the clipping: once, not per call
        self.rng = np.random.default_rng(seed)
        self._dash_left: np.ndarray | None = None  # ez-greedy: steps each env's random dash has left
        self._dash_action: np.ndarray | None = None
        self.n_updates = 0
        self.n_actions = spec["n_actions"]
        # bf16 autocast and torch.compile pay off on a GPU; on this CPU they were slower.
        self.amp = amp and self.device.type == "cuda"
        self.compiled = compile and self.device.type == "cuda"
        self._q_fn: Callable[[Any], torch.Tensor] = torch.compile(self.q) if self.compiled else self.q

    def _autocast(self) -> Any:
        return torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp)

    def explore(self, greedy: np.ndarray, epsilon: float) -> np.ndarray:
        """Each greedy action, replaced by a uniform one with probability ``epsilon``; with
        ``exploration_repeat`` > 1 a replaced action is kept for a random number of steps."""
        repeat = getattr(self.config, "exploration_repeat", 1)
        if repeat <= 1:
            explore = self.rng.random(len(greedy)) < epsilon
            return np.where(explore, self.rng.integers(self.n_actions, size=len(greedy)), greedy)
        if self._dash_left is None or len(self._dash_left) != len(greedy):
            self._dash_left = np.zeros(len(greedy), dtype=np.int64)
            self._dash_action = np.zeros(len(greedy), dtype=np.int64)
        start = (self._dash_left == 0) & (self.rng.random(len(greedy)) < epsilon)
        self._dash_action = np.where(start, self.rng.integers(self.n_actions, size=len(greedy)), self._dash_action)
        self._dash_left = np.where(start, self.rng.integers(1, repeat + 1, size=len(greedy)), self._dash_left)
        dashing = self._dash_left > 0
        self._dash_left = np.maximum(self._dash_left - 1, 0)
        return np.where(dashing, self._dash_action, greedy)

    def gradient_step(self, loss: torch.Tensor) -> None:
        """One clipped Adam step on ``loss``."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self._parameters, self.config.max_grad_norm)
        self.optimizer.step()
        self.n_updates += 1

    def set_learning_rate(self, progress_remaining: float) -> float:
        """The learning rate for this point of training (1: start, 0: end), as SB3 sets it."""
        config = self.config
        rate = config.initial_learning_rate * (progress_remaining if config.linear_learning_rate else 1.0)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        return rate

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of the agent (an algorithm adds its own parts)."""
        return {"q": self.q.state_dict(), "optimizer": self.optimizer.state_dict(), "n_updates": self.n_updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.q.load_state_dict(state["q"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.n_updates = int(state["n_updates"])


# -- a run's counters, hooks and log ----------------------------------------------------------------


def linear_epsilon(step: int, horizon: int, initial: float, final: float, fraction: float) -> float:
    """Epsilon falls linearly from ``initial`` to ``final`` over the first ``fraction`` of
    ``horizon`` env steps, then stays at ``final`` (stable-baselines3's schedule)."""
    end = fraction * horizon
    if end <= 0:
        return final
    return initial + (final - initial) * min(1.0, step / end)


def rows_of(observation: Any, rows: Any) -> Any:
    """Some rows of a batch of observations: an array, or a dict of arrays (or tensors)."""
    return {key: value[rows] for key, value in observation.items()} if isinstance(observation, dict) else observation[rows]


def to_tensor(observation: Any, device: torch.device) -> Any:
    if isinstance(observation, dict):
        return {key: torch.as_tensor(value, device=device) for key, value in observation.items()}
    return torch.as_tensor(observation, device=device)


@dataclass
class Progress:
    """Counters of a run, saved in checkpoints so that a resumed run continues the schedule.

    The epsilon and learning-rate schedules run over ``exploration_horizon`` env steps. A run
    resumed for T more steps stretches them over all its steps so far plus T, as
    stable-baselines3 does with ``reset_num_timesteps=False``: a ``lin_`` learning rate goes on
    falling from where that puts it, to 0 at the resumed run's end.
    """

    num_timesteps: int = 0
    episodes: int = 0
    exploration_horizon: int = 0  # env steps the epsilon and learning rate schedules are spread over

    def progress_remaining(self) -> float:
        return max(1.0 - self.num_timesteps / self.exploration_horizon, 0.0) if self.exploration_horizon > 0 else 1.0

    def epsilon(self, config: Any) -> float:
        """Epsilon now, for a config with the exploration_* keys."""
        return linear_epsilon(
            self.num_timesteps,
            self.exploration_horizon,
            config.exploration_initial_eps,
            config.exploration_final_eps,
            config.exploration_fraction,
        )


class Hooks:
    """What the loops call at their milestones; the CLI fills these in (checkpoints, evaluation, logs)."""

    def on_step(self, progress: Progress) -> bool:
        """After every vector-env step (cheap checks only); return False to stop training."""
        return True

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        """After every ``log_every_episodes`` finished episodes."""


class EpisodeLog:
    """The last 100 episodes' returns and lengths, handed to ``hooks.on_episodes`` every few episodes."""

    def __init__(self, hooks: Hooks, start_steps: int, every: int = 4) -> None:
        self.hooks, self.every, self.start_steps = hooks, every, start_steps
        self.returns: deque = deque(maxlen=100)
        self.lengths: deque = deque(maxlen=100)
        self.start = time.perf_counter()

    def add(self, progress: Progress, episodes: list[tuple[float, int]], loss: torch.Tensor | None) -> None:
        for episode_return, length in episodes:
            self.returns.append(episode_return)
            self.lengths.append(length)
            progress.episodes += 1
            if progress.episodes % self.every == 0:
                elapsed = max(time.perf_counter() - self.start, 1e-9)
                self.hooks.on_episodes(
                    progress, self.returns, self.lengths, loss, (progress.num_timesteps - self.start_steps) / elapsed
                )


# -- the envs a loop steps --------------------------------------------------------------------------


def observation_parts(space: spaces.Space) -> dict[str, spaces.Space]:
    """A space's parts by key: a Dict space's own, else the whole space under ``""``."""
    return dict(space.spaces) if isinstance(space, spaces.Dict) else {"": space}


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype."""
    return torch.from_numpy(np.zeros(0, dtype=dtype)).dtype


class Step(NamedTuple):
    observations: Any  # to act on next: a finished env's are its next episode's first
    next_observations: Any  # this step's transitions' true next observations
    rewards: np.ndarray
    terminated: np.ndarray  # ended for real, not by a time limit
    ended: np.ndarray  # terminated or truncated
    episodes: list[tuple[float, int]]  # (return, length) of each episode that finished


class VecEnvSteps:
    """An SB3 VecEnv (in a VecMonitor) as the loop consumes it."""

    def __init__(self, env: VecEnv) -> None:
        self.env = env
        self.num_envs, self.observation_space, self.action_space = env.num_envs, env.observation_space, env.action_space

    def reset(self) -> Any:
        return self.env.reset()

    def step(self, actions: np.ndarray) -> Step:
        observations, rewards, dones, infos = self.env.step(actions)
        truncated = np.array([info.get("TimeLimit.truncated", False) for info in infos])
        episodes = [
            (info["episode"]["r"], info["episode"]["l"]) for done, info in zip(dones, infos) if done and "episode" in info
        ]
        return Step(
            observations, real_next_observations(observations, dones, infos), rewards, dones & ~truncated, dones, episodes
        )

    def close(self) -> None:
        self.env.close()


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
        self._writer = None
        if monitor_dir is not None:
            os.makedirs(monitor_dir, exist_ok=True)
            self._writer = ResultsWriter(
                os.path.join(monitor_dir, "native"), header={"t_start": self._start, "env_id": env_id}
            )

    def reset(self) -> Any:
        observations, _ = self.env.reset(seed=self._seed)
        if self._stagger:
            # Drawn from the first env's generator, which the env seeded: reproducible.
            self._first_ends = self.env.np_random[0].integers(1, self.env.max_episode_steps + 1, size=self.num_envs)
        self._seed = None  # later resets continue each env's generator
        self._returns[:], self._lengths[:] = 0.0, 0
        return observations

    def step(self, actions: np.ndarray) -> Step:
        observations, rewards, terminated, truncated, info = self.env.step(actions)
        next_observations = true_next_observations(observations, info)
        if self._stagger:
            cut = (self._lengths + 1 == self._first_ends) & ~(terminated | truncated)
            if cut.any():  # these envs' first episodes end here, as if their time limit had come
                observations, _ = self.env.reset(options={"reset_mask": cut})
                truncated = truncated | cut
                self._first_ends[cut] = 0
        ended = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        if not ended.any():
            return Step(observations, next_observations, rewards, terminated, ended, [])
        episodes = []
        for i in np.flatnonzero(ended):
            episodes.append((float(self._returns[i]), int(self._lengths[i])))
            if self._writer is not None:
                self._writer.write_row(
                    {"r": round(episodes[-1][0], 6), "l": episodes[-1][1], "t": round(time.time() - self._start, 6)}
                )
        self._returns[ended], self._lengths[ended] = 0.0, 0
        return Step(observations, next_observations, rewards, terminated, ended, episodes)

    def close(self) -> None:
        self.env.close()
        if self._writer is not None:
            self._writer.close()


class StackedSteps:
    """Native steps with each env's last ``k`` observations stacked (:class:`agents.common.frames.FrameStack`):
    the observations SB3's VecFrameStack and VecTransposeImage would give, with no dict per env."""

    def __init__(self, steps: NativeSteps, k: int) -> None:
        self.steps, self.frames = steps, FrameStack(k)
        self.num_envs, self.action_space = steps.num_envs, steps.action_space
        self.observation_space = stacked_space(steps.observation_space, k)

    def reset(self) -> np.ndarray:
        self.frames.reset(None)
        return self.frames.push(self.steps.reset())

    def step(self, actions: np.ndarray) -> Step:
        step = self.steps.step(actions)
        # Every env's true next stack; an env that ended then starts again from its reset observation.
        next_observations = self.frames.push(step.next_observations)
        observations = self.frames.restart(step.ended, step.observations) if step.ended.any() else next_observations
        return step._replace(observations=observations, next_observations=next_observations)

    def close(self) -> None:
        self.steps.close()


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
    :class:`StackedSteps`), the others through :func:`agents.common.envs.make_vec`."""
    if vec_env == "native":
        steps = NativeSteps(env_id, env_kwargs, n_envs, seed, monitor_dir, stagger)
        if not frame_stack:
            return steps
        if isinstance(steps.observation_space, spaces.Box) and frame_stack > 1:
            return StackedSteps(steps, frame_stack)
        steps.close()  # a Dict observation, or a "stack" of 1 (which SB3's wrappers transpose): theirs
    return VecEnvSteps(make_vec(env_id, env_kwargs, n_envs, seed, vec_env, frame_stack, monitor_dir))


# -- the contract of an algorithm module -----------------------------------------------------------


@runtime_checkable
class CustomAlgorithm(Protocol):
    """What an algorithm module of our own offers ``agents.custom_train`` (``dqn.py`` and ``pqn.py``
    are two: a module passes as this protocol, and the type checker holds them to it)."""

    #: Whether the envs start at staggered steps (a short rollout of envs that all started together
    #: would hold one phase of their episodes only).
    STAGGER_ENVS: bool

    @property
    def Agent(self) -> type[QLearner]:  # a class: the modules name it so
        """The learner, with its checkpoint ``FORMAT``."""
        ...

    def settings(self, section: Section, observation_space: Any, action_space: Any) -> tuple[QConfig, dict[str, Any]]:
        """The agent's config and network spec from a checked section and the spaces it will see."""
        ...

    def replay_buffer(self, config: Any, observation_space: Any, device: Any, seed: int | None) -> Any:
        """The replay buffer its config asks for, or None for an algorithm without one."""
        ...

    def learn(self, agent: Any, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: Any) -> None:
        """Train ``agent`` on ``env`` (:func:`make_steps`'s) for ``timesteps`` more env steps."""
        ...


def custom_algorithm(module: Any, name: str) -> CustomAlgorithm:
    """``module`` as the algorithm ``name`` registered it, or one line naming what it lacks."""
    if not isinstance(module, CustomAlgorithm):
        members = ("STAGGER_ENVS", "Agent", "settings", "replay_buffer", "learn")
        missing = ", ".join(member for member in members if not hasattr(module, member))
        raise UsageError(
            f"algorithm {name!r}: its module {module.__name__} lacks {missing} (agents.custom.core.CustomAlgorithm)"
        )
    return module
