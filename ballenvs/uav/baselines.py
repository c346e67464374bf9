"""UAVGrid's reference policies (random, stay, greedy), their mean returns, and the env's
:class:`ballenvs.reference.Reference`: a trained policy is scored by its return minus the
greedy policy's on the same seeded episodes.

    python -m ballenvs.uav.baselines [--episodes 20] [--obs-type vector]

Episode k is seeded with k, the same for every policy. The README's figures come from here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym
import numpy as np

import ballenvs  # noqa: F401  (registers the ids)
from ballenvs.reference import Reference, Yardstick, paired_difference
from ballenvs.uav.greedy import GreedyPolicy

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
    returns = np.zeros(len(seeds))
    for episode, seed in enumerate(seeds):
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(choose(observation))
            returns[episode] += reward
            done = terminated or truncated
    env.close()
    return returns


def baselines(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, float]:
    """Mean return of the random and greedy policies on episodes seeded 0..19."""
    return {
        policy: float(episode_returns(policy, BASELINE_EPISODES, env_id, **env_kwargs).mean())
        for policy in ("random", "greedy")
    }


REFERENCE = Reference(
    heuristic=HEURISTIC,
    baselines=baselines,
    yardsticks=(Yardstick(f"minus {HEURISTIC} (same episodes)", {}, paired_difference(episode_returns, HEURISTIC)),),
)


def main(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    parser = argparse.ArgumentParser(
        prog="python -m ballenvs.uav.baselines", description="Mean returns of random, stay and greedy policies on UAVGrid-v0."
    )
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
