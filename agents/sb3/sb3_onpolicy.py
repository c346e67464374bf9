"""stable-baselines3's PPO and A2C as our trainers and tools use them (``--algo sb3_ppo``,
``--algo sb3_a2c``): built from a config section on any of our vector envs (the native batched ones
too, through :class:`agents.environments.envs.NativeVecEnv`), saved in SB3's own .zip, and read back
as :mod:`agents.sb3.sb3_dqn` reads DQN's: rebuilt from the run's config.yml, from the file only its
plain counters and its weights (``weights_only``), nothing unpickled.

Our players (self-play's pool, ``gym.make(..., opponent=RUN)``, :func:`agents.load_player`) take a
network whose outputs' argmax is the greedy action and whose softmax is the policy: here the
policy's action logits (:class:`ActionLogits`).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import A2C, PPO
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.utils import LinearSchedule

from agents.artifacts.models import read_snapshot, section_of, spaces_of
from agents.artifacts.runs import atomic_path
from agents.common.configuration.config import Section, parse_kwargs, schedule
from agents.common.configuration.memory import machine_memory
from agents.common.errors import UsageError
from agents.common.networks.policies import check_policy
from agents.sb3.sb3_dqn import check_roles, read_model_file, restore

#: The algorithms, by the name ``--algo`` takes.
CLASSES: dict[str, type[OnPolicyAlgorithm]] = {"sb3_ppo": PPO, "sb3_a2c": A2C}
#: What their policies take as policy_kwargs (ActorCriticPolicy's own arguments, past the spaces and the schedule).
POLICY_KWARGS = tuple(list(inspect.signature(ActorCriticPolicy).parameters)[3:])


class ActionLogits(torch.nn.Module):
    """A policy's action logits for a batch of observations (its image scaling and one-hot
    encoding included): what our players read as a network's outputs."""

    def __init__(self, policy: ActorCriticPolicy) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, observation: Any) -> torch.Tensor:
        distribution = self.policy.get_distribution(observation).distribution
        assert isinstance(distribution, torch.distributions.Categorical)  # every env here acts from a Discrete space
        return distribution.logits


class OnPolicyModel:
    """A trained PPO or A2C as our loaders return models (:class:`agents.common.configuration.registry.Policy`):
    SB3's ``predict``, and its logits as ``q_net``."""

    def __init__(self, model: OnPolicyAlgorithm) -> None:
        self.model, self.q_net = model, ActionLogits(model.policy)

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False) -> Any:
        return self.model.predict(observation, state, episode_start, deterministic)


def check_values(algo: str, section: Section, observation_space: spaces.Space, n_envs: int = 1) -> None:
    """What stable-baselines3 would find wrong only once a model is built or trained, in one line:
    checked by the trainer before its run folder, and by every loader before it builds a network."""
    check_policy(section.policy, observation_space)
    policy_kwargs = section.network
    unknown = sorted(set(policy_kwargs) - set(POLICY_KWARGS))
    if unknown:
        raise UsageError(
            f"policy_kwargs key(s) {', '.join(unknown)} not taken by {algo}'s policies; valid: {', '.join(POLICY_KWARGS)}"
        )
    check_roles(section.policy, policy_kwargs, {})
    steps = section.algo_kwargs.get("n_steps", 2048 if algo == "sb3_ppo" else 5)
    batch = steps * n_envs
    parts = observation_space.spaces.values() if isinstance(observation_space, spaces.Dict) else [observation_space]
    needed = batch * sum(int(np.prod(part.shape or ())) for part in parts) * 4  # SB3's rollout keeps float32
    if needed > machine_memory():
        raise UsageError(
            f"n_steps={steps} x n_envs={n_envs} needs about {needed / 2**30:,.1f} GiB of rollout memory for these "
            f"observations; this machine has {machine_memory() / 2**30:,.1f} GiB"
        )
    if algo == "sb3_ppo" and (batch < 2 or section.algo_kwargs.get("batch_size", 64) < 2):
        raise UsageError(
            f"sb3_ppo: n_steps x n_envs ({batch}) and batch_size ({section.algo_kwargs.get('batch_size', 64)}) "
            "must each be at least 2 (its advantages are standardised over a minibatch)"
        )


def model_kwargs(algo_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The algorithm's keyword arguments from a section's keys, as the RL Zoo builds them:
    policy_kwargs parsed, ``lin_<x>`` learning rates made SB3's own schedule (a saved model then
    unpickles where ``agents`` is not installed)."""
    kwargs = dict(algo_kwargs)
    if "policy_kwargs" in kwargs:
        kwargs["policy_kwargs"] = parse_kwargs("policy_kwargs", kwargs["policy_kwargs"])
    if "learning_rate" in kwargs:
        initial, linear = schedule(kwargs["learning_rate"])
        kwargs["learning_rate"] = LinearSchedule(initial, 0.0, 1.0) if linear else initial
    return kwargs


def build_model(algo: str, section: Section, env: Any, seed: int | None, device: str) -> OnPolicyAlgorithm:
    """A fresh model of ``algo`` for ``section``: on ``env`` (a VecEnv), or on ``(observation_space,
    action_space)`` for a model that only plays."""
    kind, kwargs = CLASSES[algo], model_kwargs(section.algo_kwargs)
    if isinstance(env, tuple):
        observation_space, action_space = env
        model = kind(section.policy, None, seed=seed, device=device, _init_setup_model=False, **kwargs)  # type: ignore[arg-type]
        model.observation_space, model.action_space, model.n_envs = observation_space, action_space, 1
        model._setup_model()
        return model
    return kind(section.policy, env, seed=seed, device=device, **kwargs)


def save_model(model: OnPolicyAlgorithm, path: Path) -> None:
    """SB3's .zip, written atomically, loadable by a plain ``PPO.load`` / ``A2C.load``."""
    with atomic_path(path) as tmp:
        model.save(tmp)


def _played(model_path: Path, run_config: dict[str, Any], device: str) -> OnPolicyAlgorithm:
    algo, section, spaces_ = run_config["algo"], section_of(run_config), spaces_of(run_config)
    check_values(algo, section, spaces_[0])
    return build_model(algo, section, spaces_, seed=None, device=device)


def load_policy(model_path: Path, run_config: dict[str, Any], device: str) -> OnPolicyModel:
    """A saved model that plays, rebuilt from its run's config."""
    model = _played(model_path, run_config, device)
    return OnPolicyModel(restore(model, read_model_file(model_path, device), model_path, device))  # type: ignore[arg-type]


def load_snapshot(path: Path, run_config: dict[str, Any], device: str) -> OnPolicyModel:
    """A self-play snapshot (the logits network's weights) of a run, as a model that plays."""
    played = OnPolicyModel(_played(path, run_config, device))
    try:
        played.q_net.load_state_dict(read_snapshot(path, device)["q"])
    except RuntimeError:
        raise UsageError(f"snapshot {str(path)!r}: its weights do not fit the run's network") from None
    return played
