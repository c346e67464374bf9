"""Mean returns of the reference policies on UAVGrid-v0: random, stay, greedy.

    python -m ballenvs.uav.baselines [--episodes 20] [--obs-type vector]

Episode k is seeded with k, the same for every policy. The README's figures come from here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import ballenvs  # noqa: F401  (registers the ids)
from ballenvs.uav.greedy import GreedyPolicy

POLICIES = ("random", "stay", "greedy")


def episode_returns(policy: str | Callable[[Any], int], episodes: int = 20, **env_kwargs: Any) -> np.ndarray:
    """Undiscounted return of each of ``episodes`` episodes, episode k reset with seed k.

    ``policy``: one of :data:`POLICIES`, or a function from an observation to an action (a
    learned policy, to compare with these on the very same episodes).
    """
    env = gym.make("UAVGrid-v0", **env_kwargs)
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
    returns = np.zeros(episodes)
    for episode in range(episodes):
        observation, _ = env.reset(seed=episode)
        done = False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(choose(observation))
            returns[episode] += reward
            done = terminated or truncated
    env.close()
    return returns


def main(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    parser = argparse.ArgumentParser(description="Mean returns of random, stay and greedy policies on UAVGrid-v0.")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--obs-type", default="vector", choices=("vector", "image"))
    args = parser.parse_args(argv)
    results = {policy: episode_returns(policy, args.episodes, obs_type=args.obs_type) for policy in POLICIES}
    print(f"UAVGrid-v0, {args.episodes} episodes (seeds 0..{args.episodes - 1}):")
    for policy, returns in results.items():
        print(f"  {policy:7s} {returns.mean():7.2f} +- {returns.std():5.2f}")
    print(f"  greedy / random = {results['greedy'].mean() / results['random'].mean():.1f}x")
    return results


if __name__ == "__main__":
    main()
