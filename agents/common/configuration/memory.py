"""What a run will take of this machine's memory, priced before anything is built: its replay
buffer, its networks, its minibatches and its envs' observations. A run that would not fit is
refused in one line, naming the key that asks too much."""

from __future__ import annotations

import os

import numpy as np
from gymnasium import spaces

from agents.common.configuration.config import Section
from agents.common.errors import UsageError
from agents.common.networks.policies import CNN_FEATURES, DEFAULT_NET_ARCH


def replay_bytes(buffer_size: int, observation_space: spaces.Space) -> int:
    """Memory a replay buffer of ``buffer_size`` transitions takes: each stores its observation
    and the next one (plus a few bytes of action, reward and flags)."""
    return buffer_size * (2 * observation_bytes(observation_space) + 16)


def machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def network_bytes(section: Section, observation_space: spaces.Space, n_actions: int) -> int:
    """About what the Q-networks take while training: weights, gradients and Adam's two moments of
    the online network and the target's weights (5 copies), the hidden layers of ``net_arch``
    after the features (an image's CNN gives CNN_FEATURES, other observations their size)."""
    net_arch = section.network.get("net_arch", DEFAULT_NET_ARCH.get(section.policy, DEFAULT_NET_ARCH["MlpPolicy"]))
    if not isinstance(net_arch, (list, tuple)) or not all(isinstance(w, int) and not isinstance(w, bool) for w in net_arch):
        return 0  # a malformed net_arch is the trainer's check to name
    parts = observation_space.spaces.values() if isinstance(observation_space, spaces.Dict) else [observation_space]
    # An image gives the CNN's features; a one-hot part a few times its size.
    shapes = [part.shape or () for part in parts]
    width = sum(CNN_FEATURES if len(shape) == 3 else int(np.prod(shape)) * 4 for shape in shapes)
    params = 0
    for hidden in [*net_arch, n_actions]:
        params += width * max(hidden, 0) + max(hidden, 0)
        width = hidden
    return 5 * 4 * params


def observation_bytes(observation_space: spaces.Space) -> int:
    parts = observation_space.spaces.values() if isinstance(observation_space, spaces.Dict) else [observation_space]
    return sum(int(np.prod(part.shape or ())) * np.dtype(part.dtype).itemsize for part in parts)


def check_memory(
    section: Section, observation_space: spaces.Space, action_space: spaces.Space, replay_buffer: bool = False
) -> None:
    """Refuse, before anything is built, a run whose networks, minibatches and envs would not fit
    in this machine's memory; ``replay_buffer``: it keeps one, of ``buffer_size`` (:func:`check_replay_memory`)."""
    if replay_buffer:
        check_replay_memory(section.algo_kwargs.get("buffer_size", 1_000_000), observation_space)
    observation = observation_bytes(observation_space)  # already frame-stacked
    batch = int(section.algo_kwargs.get("batch_size", 32))
    costs = rollout_costs(section, observation)
    costs |= {
        f"net_arch of policy_kwargs ({section.algo_kwargs.get('policy_kwargs')})": network_bytes(
            section, observation_space, int(getattr(action_space, "n", 1))
        ),
        f"batch_size={batch}": batch * observation * 2 * 4,  # observations and next ones, as float32
        f"n_envs={section.n_envs} x frame_stack={section.frame_stack or 1}": section.n_envs * observation * 4,
    }
    available = machine_memory()
    for what, needed in costs.items():
        if needed > available:
            raise UsageError(
                f"{what} needs about {needed / 2**30:,.1f} GiB of memory for these observations; "
                f"this machine has {available / 2**30:,.1f} GiB"
            )


def rollout_steps(section: Section) -> int | None:
    """The section's ``rollout_steps`` (a learner from rollouts: PQN, our PPO); None for one that keeps
    no rollout, or a value the config's check will name."""
    steps = section.algo_kwargs.get("rollout_steps")
    return steps if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 1 else None


def minibatch_size(section: Section) -> int:
    """The transitions an update learns from: ``batch_size``, or a learner from rollouts' share of a
    rollout (steps x envs / ``n_minibatches``, rounded up)."""
    steps = rollout_steps(section)
    if steps is None:
        return int(section.algo_kwargs.get("batch_size", 32))
    minibatches = section.algo_kwargs.get("n_minibatches", 1)
    minibatches = minibatches if isinstance(minibatches, int) and minibatches >= 1 else 1
    return -(-steps * section.n_envs // minibatches)


def rollout_costs(section: Section, observation: int) -> dict[str, int]:
    """What a learner from rollouts (PQN, our PPO) holds: every step's observations of every env as
    the envs give them, and a few numbers each (action, reward, flags, value, log-probability); then a
    minibatch of them as float32. Nothing for a learner that keeps no rollout."""
    steps = rollout_steps(section)
    if steps is None:
        return {}
    held = f"rollout_steps={steps} x n_envs={section.n_envs}"
    minibatches = f"{held} / n_minibatches={section.algo_kwargs.get('n_minibatches', 1)}"
    return {held: steps * section.n_envs * (observation + 32), minibatches: minibatch_size(section) * observation * 4}


def check_replay_memory(buffer_size: int, observation_space: spaces.Space) -> None:
    """Refuse a replay buffer larger than this machine's memory, before allocating anything."""
    needed, available = replay_bytes(buffer_size, observation_space), machine_memory()
    if needed > available:
        raise UsageError(
            f"buffer_size={buffer_size} needs {needed / 2**30:,.1f} GiB of replay memory for these observations; "
            f"this machine has {available / 2**30:,.1f} GiB"
        )
