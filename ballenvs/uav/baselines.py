"""Mean returns of UAVGrid's reference policies, the README's figures.

    python -m ballenvs.uav.baselines [--episodes 20] [--obs-type vector]

Episode k is seeded with k, the same for every policy.
"""

from __future__ import annotations

import sys

import numpy as np

from ballenvs.cli import MAX_GAMES, Parser, bounded, run
from ballenvs.uav.reference import POLICIES, episode_returns


def main(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    parser = Parser(
        prog="python -m ballenvs.uav.baselines", description="Mean returns of random, stay and greedy policies on UAVGrid-v0."
    )
    parser.add_argument("--episodes", type=bounded(1, MAX_GAMES), default=20)
    parser.add_argument("--obs-type", default="vector", choices=("vector", "image"))
    args = parser.parse_args(argv)
    results = {policy: episode_returns(policy, args.episodes, obs_type=args.obs_type) for policy in POLICIES}
    print(f"UAVGrid-v0, {args.episodes} episodes (seeds 0..{args.episodes - 1}):")
    for policy, returns in results.items():
        print(f"  {policy:7s} {returns.mean():7.2f} +- {returns.std():5.2f}")
    print(f"  greedy / random = {results['greedy'].mean() / results['random'].mean():.1f}x")
    return results


if __name__ == "__main__":
    sys.exit(run(main))
