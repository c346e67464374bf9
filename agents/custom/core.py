"""What our Q-learning agents (:mod:`agents.custom.dqn`, :mod:`agents.custom.pqn`) share with each
other and with their command line:

- :func:`settings`: the agent's config (a dataclass of :mod:`agents.common.configuration.hyperparameters`) and
  network spec from a checked config section;
- :class:`QLearner`: a Q-network and its optimiser on a device, seeded epsilon-greedy exploration,
  bf16 autocast and ``torch.compile`` where they pay (CUDA), the learning-rate schedule and the
  gradient step;
- :class:`Progress`, :class:`Hooks`, :class:`EpisodeLog`: a run's counters and schedules (saved in
  checkpoints), the milestones the command line fills in, the episode log;
- the shapes a loop's buffers take (:func:`observation_parts`, :func:`torch_dtype`); the envs a
  loop steps are :mod:`agents.common.environments.steps`'.

An algorithm module (``dqn.py``, ``pqn.py``, or one registered in :mod:`agents.common.configuration.algorithms`)
is a :class:`CustomAlgorithm`; ``python -m agents.custom_train --algo NAME`` runs any of them.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.logger import Logger

from agents.common.configuration.config import Section, parse_kwargs
from agents.common.configuration.hyperparameters import QConfig
from agents.common.errors import UsageError
from agents.common.session.milestones import Milestones
from agents.custom.networks import QNetwork, network_spec
from ballenvs.state import copied, fitting_or_none, generator_state, parts, set_generator_state

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

    #: Why a resume of this agent's run cannot go on exactly (None: it can, see :meth:`runtime_state`).
    INEXACT_RESUME: str | None = None
    #: The name its checkpoints carry (:mod:`agents.custom.checkpoint`): each algorithm's own.
    FORMAT: str

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
        assert self._dash_action is not None  # made with _dash_left
        self._dash_action = np.where(start, self.rng.integers(self.n_actions, size=len(greedy)), self._dash_action)
        self._dash_left = np.where(start, self.rng.integers(1, repeat + 1, size=len(greedy)), self._dash_left)
        dashing = self._dash_left > 0
        self._dash_left = np.maximum(self._dash_left - 1, 0)
        return np.where(dashing, self._dash_action, greedy)

    def epsilon_greedy(self, observation: Any, epsilon: float) -> np.ndarray:
        """Epsilon-greedy actions for a batch of observations, with one forward pass."""
        with torch.inference_mode(), self._autocast():
            greedy = self._q_fn(to_tensor(observation, self.device)).argmax(dim=1).cpu().numpy()
        return self.explore(greedy, epsilon)

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

    def runtime_state(self) -> dict[str, Any]:
        """What the agent holds between steps besides its networks and optimiser, for a resume that
        goes on exactly (:mod:`ballenvs.state`'s kinds of values): its exploration's generator
        and dashes; an algorithm adds its own."""
        return {
            "rng": generator_state(self.rng),
            "dash_left": copied(self._dash_left),
            "dash_action": copied(self._dash_action),
        }

    def load_runtime_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("rng", "dash_left", "dash_action"), "agent")
        dash_left = fitting_or_none(self._dash_left, state["dash_left"], "agent dash_left")
        dash_action = fitting_or_none(self._dash_action, state["dash_action"], "agent dash_action")
        if (dash_left is None) != (dash_action is None):
            raise ValueError("state agent: dash_left and dash_action must both be None or both arrays")
        set_generator_state(self.rng, state["rng"], "agent rng")
        self._dash_left, self._dash_action = dash_left, dash_action

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

    def record(self, key: str, value: float) -> None:
        """A figure of the algorithm's own, written with the next log line."""


class RunHooks(Hooks):
    """The hooks a run hands its loop: the run's milestones after every vector-env step, and every
    few episodes the rollout's figures in the logger under stable-baselines3's keys (one tool
    reads both trainers' progress.csv). Both go down a layer, to :mod:`agents.common`."""

    def __init__(self, milestones: Milestones, logger: Logger, agent: QLearner) -> None:
        self.milestones, self.logger, self.agent = milestones, logger, agent
        self.start_time = time.time()

    def on_step(self, progress: Progress) -> bool:
        # Every row carries the exploration rate, an evaluation's too, as stable-baselines3's do.
        self.logger.record("rollout/exploration_rate", progress.epsilon(self.agent.config))
        return self.milestones.on_step(progress.num_timesteps)

    def record(self, key: str, value: float) -> None:
        self.logger.record(key, value)

    def on_episodes(self, progress: Progress, returns: deque, lengths: deque, loss: torch.Tensor | None, fps: float) -> None:
        record = self.logger.record
        record("rollout/ep_rew_mean", float(np.mean(returns)))
        record("rollout/ep_len_mean", float(np.mean(lengths)))
        record("rollout/exploration_rate", progress.epsilon(self.agent.config))
        record("time/episodes", progress.episodes)
        record("time/fps", int(fps))
        record("time/time_elapsed", int(time.time() - self.start_time))
        record("time/total_timesteps", progress.num_timesteps)
        record("train/learning_rate", self.agent.optimizer.param_groups[0]["lr"])
        record("train/n_updates", self.agent.n_updates)
        if loss is not None:
            record("train/loss", float(loss))  # the one device sync, every few episodes
        self.logger.dump(progress.num_timesteps)


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


# -- what a loop's buffers hold --------------------------------------------------------------------------


def observation_parts(space: spaces.Space) -> dict[str, spaces.Space]:
    """A space's parts by key: a Dict space's own, else the whole space under ``""``."""
    return dict(space.spaces) if isinstance(space, spaces.Dict) else {"": space}


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype."""
    return torch.from_numpy(np.zeros(0, dtype=dtype)).dtype


# -- the contract of an algorithm module -----------------------------------------------------------


@runtime_checkable
class CustomAlgorithm(Protocol):
    """What an algorithm module of our own offers :class:`agents.learners.custom.CustomLearner`
    (``dqn.py`` and ``pqn.py`` are two: a module passes as this protocol, and the type checker
    holds them to it). A module may leave out ``STAGGER_ENVS`` (False), ``replay_buffer`` (none)
    and ``settings`` (:func:`settings` of its ``Config``): :func:`custom_algorithm` fills them in."""

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
        """Train ``agent`` on ``env`` (:func:`agents.common.environments.steps.make_steps`'s) for
        ``timesteps`` more env steps."""
        ...


class _WithDefaults:
    """A module that left out members of :class:`CustomAlgorithm` that have defaults, completed."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self.STAGGER_ENVS: bool = getattr(module, "STAGGER_ENVS", False)
        self.Agent: type[QLearner] = module.Agent
        self.learn = module.learn

    def settings(self, section: Section, observation_space: Any, action_space: Any) -> tuple[QConfig, dict[str, Any]]:
        own = getattr(self.module, "settings", None)
        if own is not None:
            return own(section, observation_space, action_space)
        return settings(self.module.Config, section, observation_space, action_space)

    def replay_buffer(self, config: Any, observation_space: Any, device: Any, seed: int | None) -> Any:
        own = getattr(self.module, "replay_buffer", None)
        return None if own is None else own(config, observation_space, device, seed)


def custom_algorithm(module: Any, name: str) -> CustomAlgorithm:
    """``module`` as the algorithm ``name`` registered it (its left-out members filled in), or one
    line naming what it lacks."""
    if isinstance(module, CustomAlgorithm):
        return module
    missing = [member for member in ("Agent", "learn") if not hasattr(module, member)]
    if not (hasattr(module, "settings") or hasattr(module, "Config")):
        missing.append("settings (or Config)")
    if missing:
        raise UsageError(
            f"algorithm {name!r}: its module {module.__name__} lacks {', '.join(missing)} (agents.custom.core.CustomAlgorithm)"
        )
    return _WithDefaults(module)
