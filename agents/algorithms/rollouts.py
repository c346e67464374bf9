"""The rollouts PQN and our PPO learn from (:mod:`agents.algorithms.pqn`, :mod:`agents.algorithms.ppo`):
many vectorised envs play a short rollout of ``rollout_steps`` steps, acting for all of them with one
forward pass; the agent learns from the full rollout, which is then thrown away.

Episode ends inside a rollout: a termination cuts the return (nothing follows it); a truncation
(the time limit) is not a terminal state, so its target bootstraps on the value of the episode's
real last observation (``Rollout.finals``), not on the next episode's first one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch
from gymnasium import spaces

from agents.common.configuration.config import Section
from agents.common.errors import UsageError
from agents.common.tensors import observation_parts, rows_of, to_tensor, torch_dtype
from agents.session.hooks import EpisodeLog, Hooks
from agents.session.progress import Progress
from ballenvs.state import parts

#: A short rollout of envs that all started together would hold one phase of their episodes only.
STAGGER_ENVS = True


def check_minibatches(config: Any, section: Section) -> None:
    """Every minibatch holds a transition: ``n_minibatches`` at most a rollout's, or one line saying so."""
    rollout = config.rollout_steps * section.n_envs
    if config.n_minibatches > rollout:
        raise UsageError(
            f"n_minibatches={config.n_minibatches}: more than a rollout holds ({config.rollout_steps} steps x "
            f"{section.n_envs} envs); valid: 1..{rollout}"
        )


def replay_buffer(config: Any, observation_space: Any, device: Any, seed: int | None) -> None:
    """Learners from rollouts keep no replay buffer."""
    return None


class Rollout:
    """One rollout of T steps of N envs, stored as tensors on the agent's device."""

    def __init__(self, steps: int, n_envs: int, observation_space: Any, device: torch.device) -> None:
        self.observations = {
            key: torch.zeros((steps, n_envs, *(space.shape or ())), dtype=torch_dtype(space.dtype), device=device)
            for key, space in observation_parts(observation_space).items()
        }
        self.actions = torch.zeros((steps, n_envs), dtype=torch.long, device=device)
        self.rewards, self.terminated, self.ended, self.values = (
            torch.zeros((steps, n_envs), device=device) for _ in range(4)
        )
        self.finals: list[tuple[int, np.ndarray, Any]] = []  # (step, envs that ended, their last observations)
        self.filled = 0  # steps stored so far
        self._dict = isinstance(observation_space, spaces.Dict)

    def _stores(self) -> dict[str, torch.Tensor]:
        stores = {"actions": self.actions, "rewards": self.rewards, "terminated": self.terminated, "ended": self.ended}
        return stores | {"values": self.values} | {f"obs/{key}": store for key, store in self.observations.items()}

    def get_state(self) -> dict[str, Any]:
        """The steps stored so far: a checkpoint between two updates holds the rollout cut short."""
        stored = {name: store[: self.filled].clone() for name, store in self._stores().items()}
        return {"filled": self.filled, "stores": stored, "finals": list(self.finals)}

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("filled", "stores", "finals"), "rollout")
        filled, stored, finals = state["filled"], state["stores"], state["finals"]
        stores = self._stores()
        if not isinstance(filled, int) or isinstance(filled, bool) or not 0 <= filled <= len(self.actions):
            raise ValueError(f"state rollout filled: expected a step count up to {len(self.actions)}, got {filled!r:.80}")
        if not isinstance(stored, dict) or set(stored) != set(stores):
            raise ValueError(f"state rollout stores: expected {', '.join(stores)}")
        for name, store in stores.items():
            saved = stored[name]
            if not isinstance(saved, torch.Tensor) or saved.shape != store[:filled].shape or saved.dtype != store.dtype:
                raise ValueError(
                    f"state rollout {name}: expected a {store.dtype} tensor of shape {tuple(store[:filled].shape)}"
                )
        if not isinstance(finals, list) or not all(
            isinstance(final, tuple) and len(final) == 3 and isinstance(final[0], int) and 0 <= final[0] < filled
            for final in finals
        ):
            raise ValueError("state rollout finals: expected (step, envs, observations) of the steps stored")
        for name, store in stores.items():
            store[:filled] = stored[name].to(store.device)
        self.filled, self.finals = filled, list(finals)

    def store_observation(self, t: int, observation: Any) -> Any:
        """Keep step t's observations and return them as the tensors to act on."""
        for key, store in self.observations.items():
            store[t] = torch.as_tensor(observation[key] if self._dict else observation)
        return self.observation(t)

    def observation(self, t: int) -> Any:
        parts = {key: store[t] for key, store in self.observations.items()}
        return parts if self._dict else parts[""]

    def flat(self) -> Any:
        parts = {key: store.flatten(0, 1) for key, store in self.observations.items()}
        return parts if self._dict else parts[""]


class KeptRollout:
    """The rollout an agent fills (PQN's, our PPO's), kept in its checkpoints when cut short, and the
    generator of its minibatches' order."""

    def __init__(self, rollout_class: type[Rollout], seed: int) -> None:
        self.rollout_class = rollout_class  # what it stores of a step (our PPO's keeps log-probabilities too)
        self.generator = torch.Generator().manual_seed(seed)  # minibatch order
        self.rollout: Rollout | None = None
        self._restored: dict[str, Any] | None = None  # a checkpoint's, for the first rollout made

    def rollout_for(self, steps: int, n_envs: int, observation_space: Any, device: torch.device) -> Rollout:
        """The rollout the loop fills: a checkpoint's cut short when the agent was restored from one."""
        if self.rollout is None or self.rollout.actions.shape != (steps, n_envs):
            self.rollout = self.rollout_class(steps, n_envs, observation_space, device)
        if self._restored is not None:
            self.rollout.set_state(self._restored)
            self._restored = None
        return self.rollout

    def get_state(self) -> dict[str, Any]:
        """The agent's runtime state's part (:meth:`agents.session.contract.AlgorithmAgent.runtime_state`)."""
        return {"generator": self.generator.get_state(), "rollout": None if self.rollout is None else self.rollout.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("generator", "rollout"), "agent")
        try:
            self.generator.set_state(state["generator"])
        except (TypeError, RuntimeError) as error:
            raise ValueError(f"state agent generator: not a torch generator's state ({error})") from None
        self._restored = state["rollout"]


class StopInUpdate(Exception):
    """A stop asked for between two minibatches of a rollout's updates."""


def never() -> bool:
    """No stop is ever asked for (updates called outside a run)."""
    return False


def check_stop(stop_asked: Callable[[], bool]) -> None:
    """Between two minibatches: a stop asked for ends the updates here (:func:`update_or_undo`)."""
    if stop_asked():
        raise StopInUpdate


def update_or_undo(agent: Any, update: Callable[[], torch.Tensor]) -> torch.Tensor | None:
    """``update()``'s loss; or None where a stop came inside it (:func:`check_stop`), the agent then
    as it was before the update (its networks, optimiser, counts and the generator of its minibatches'
    order), so that the interrupted model, saved with its full rollout, resumes with this same update."""
    before = copy.deepcopy(agent.state_dict()), agent.kept.generator.get_state()
    try:
        return update()
    except StopInUpdate:
        agent.load_state_dict(before[0])
        agent.kept.generator.set_state(before[1])
        return None


class RolloutAgent(Protocol):
    """What the loop asks of a learner from rollouts (PQN's, our PPO's)."""

    config: Any
    device: torch.device

    def rollout_for(self, steps: int, n_envs: int, observation_space: Any) -> Rollout:
        """Its :class:`KeptRollout`'s."""
        ...

    def play(self, rollout: Rollout, t: int, observation: Any, epsilon: float) -> np.ndarray:
        """The actions for step ``t`` of ``rollout``, its observations and what the updates need stored."""
        ...

    def values(self, observation: Any) -> torch.Tensor:
        """Each observation's value, as the targets bootstrap on it."""
        ...

    def learn_rollout(self, rollout: Rollout, observation: Any, stop_asked: Callable[[], bool]) -> torch.Tensor | None:
        """The updates on a full rollout (``observation``: the envs' after it). Returns the last loss;
        None where ``stop_asked()`` turned true between two minibatches (:func:`update_or_undo`)."""
        ...

    def set_learning_rate(self, progress_remaining: float) -> float: ...

    def average_tail(self) -> None: ...


def next_values(agent: RolloutAgent, rollout: Rollout, observation: Any) -> torch.Tensor:
    """V'_t of every step: the next step's value, or that of the real last observation where an
    episode ended; after the rollout's last step, that of ``observation`` (the envs' now)."""
    next_values = torch.cat([rollout.values[1:], agent.values(to_tensor(observation, agent.device))[None]])
    for t, envs, rows in rollout.finals:
        next_values[t, torch.as_tensor(envs)] = agent.values(to_tensor(rows, agent.device))
    return next_values


def learn(agent: RolloutAgent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: None = None) -> None:
    """Collect ``timesteps`` more env steps from ``env`` (see :func:`agents.environments.steps.make_steps`) in
    rollouts of ``rollout_steps`` steps, each followed by its updates; or fewer if ``hooks.on_step``
    says stop. The loop never waits on the device except to fetch the actions it acts on."""
    config, n_envs = agent.config, env.num_envs
    rollout = agent.rollout_for(config.rollout_steps, n_envs, env.observation_space)
    log = EpisodeLog(hooks, progress.num_timesteps)
    loss: torch.Tensor | None = None
    end = progress.num_timesteps + timesteps
    observation = env.first_observations()
    while progress.num_timesteps < end:
        while rollout.filled < config.rollout_steps:  # from 0, or where a restored checkpoint's rollout stopped
            t = rollout.filled
            actions = agent.play(rollout, t, observation, progress.epsilon(config))
            step = env.step(actions)
            rollout.actions[t] = torch.as_tensor(actions)
            rollout.rewards[t] = torch.as_tensor(step.rewards, dtype=torch.float32)
            rollout.terminated[t] = torch.as_tensor(step.terminated, dtype=torch.float32)
            rollout.ended[t] = torch.as_tensor(step.ended, dtype=torch.float32)
            if step.ended.any():
                envs = np.flatnonzero(step.ended)
                rollout.finals.append((t, envs, rows_of(step.next_observations, envs)))
            observation = step.observations
            progress.num_timesteps += n_envs
            rollout.filled = t + 1
            log.add(progress, step.episodes, loss)
            if not hooks.on_step(progress):
                return
        if config.linear_learning_rate:
            agent.set_learning_rate(progress.progress_remaining())
        updated = agent.learn_rollout(rollout, observation, hooks.stop_asked)
        if updated is None:  # stopped inside the updates: the agent as before them, the rollout kept whole
            return
        loss = updated
        if progress.progress_remaining() < config.tail_averaging:
            agent.average_tail()
        rollout.filled = 0
        rollout.finals.clear()
