"""UAVGrid's reference policies (random, stay, greedy), their mean returns, and the env's
:class:`ballenvs.reference.Reference`: a trained policy is scored by its return minus the
greedy policy's on the same seeded episodes (episode k seeded with k, the same for every policy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

import ballenvs  # noqa: F401  (registers the ids)
from ballenvs.reference import Reference, Yardstick, paired_difference
from ballenvs.uav.game import PARAM_NAMES
from ballenvs.uav.greedy import GreedyPolicy
from ballenvs.uav.physics import UAVCore, UAVParams

POLICIES = ("random", "stay", "greedy")
HEURISTIC = "greedy"
BASELINE_EPISODES = 20


def episode_returns(
    policy: str | Callable[[Any], int], episodes: int | Iterable[int] = 20, env_id: str = "UAVGrid-v0", **env_kwargs: Any
) -> np.ndarray:
    """Undiscounted return of each episode: ``episodes`` seeds (an int n: seeds 0..n-1), each
    episode reset with its seed.

    ``policy``: one of :data:`POLICIES`, or a function from an observation to an action (a
    learned policy, to compare with these on the very same episodes).
    """
    env = gym.make(env_id, **env_kwargs)
    env.action_space.seed(0)
    if callable(policy):
        choose = policy
    else:
        named: dict[str, Callable[[Any], Any]] = {
            "random": lambda observation: env.action_space.sample(),
            "stay": lambda observation: 0,
            "greedy": GreedyPolicy(env),
        }
        choose = named[policy]
    seeds = range(episodes) if isinstance(episodes, int) else list(episodes)
    returns = played_returns(env, choose, seeds)
    env.close()
    return returns


def played_returns(env: gym.Env, choose: Callable[[Any], Any], seeds: Iterable[int]) -> np.ndarray:
    """Undiscounted return of each episode of ``env`` played by ``choose`` (an observation to an
    action), episode k reset with ``seeds``' k-th seed."""
    returns = []
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(choose(observation))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return np.array(returns)


def baselines(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, float]:
    """Mean return of the random and greedy policies on episodes seeded 0..19."""
    return {
        policy: float(episode_returns(policy, BASELINE_EPISODES, env_id, **env_kwargs).mean())
        for policy in ("random", "greedy")
    }


def greedy_on_states(env_kwargs: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """The greedy policy's actions (N,) in N grids' states (``info["state"]`` rows of an env made
    with ``env_kwargs``, its ``state_info=True`` option): what it plays in those grids."""
    params = UAVParams(**{name: value for name, value in env_kwargs.items() if name in PARAM_NAMES})

    def act(states: np.ndarray) -> np.ndarray:
        return np.asarray(GreedyPolicy(UAVCore.of_rows(params, states)).act(), dtype=np.int64)

    return act


REFERENCE = Reference(
    heuristic=HEURISTIC,
    baselines=baselines,
    yardsticks=(Yardstick(f"minus {HEURISTIC} (same episodes)", {}, paired_difference(episode_returns, HEURISTIC)),),
    state_policies={HEURISTIC: greedy_on_states},
)
