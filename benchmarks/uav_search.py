"""How far past greedy a player that reads UAVGrid's exact state gets by searching: what a learner
on UAVGridImage-v0 (whose image shows that state) can hope to reach past its greedy teacher.

    python -m benchmarks.uav_search [--episodes 20] [--futures 32] [--horizon 100] [--z 2.0]

:class:`RouteSearch` plans the UAV's next target: every step, for each UE's cell as the target
(fly to it, then play greedy) and for greedy's own move, it plays ``--futures`` sampled futures
``--horizon`` steps on (new requests drawn from its own generator: it does not know the env's
draws), and moves towards the target whose gain over greedy's move on the same futures is
``--z`` standard errors clear, else as greedy does. Each episode is played by greedy and by the
search from the same seed (the yardstick's episodes, 20000 on), and the table gives each return
and the mean ratio. Writes ``uav_search.json``.
"""

from __future__ import annotations

import sys
from contextlib import closing
from typing import Any

import gymnasium as gym
import numpy as np

import ballenvs  # noqa: F401  (registers the ids)
from agents.common.errors import UsageError
from agents.session.cli import Parser, run_cli
from agents.session.console import Console
from ballenvs.backend import NUMPY
from ballenvs.directions import heading_to_action
from ballenvs.reference import SCORE_SEED
from ballenvs.uav.greedy import GreedyPolicy
from ballenvs.uav.physics import UAVCore
from ballenvs.uav.reference import played_returns
from benchmarks.common import check_ranges, machine, progress_flag, row, write_json


class RouteSearch:
    """A UAVGrid player that reads the exact state of one grid (``env``: a UAVGrid env) and plans
    its next target over sampled futures; ``act()`` as :class:`GreedyPolicy`'s."""

    def __init__(self, env: gym.Env, futures: int, horizon: int, z: float, seed: int = 0) -> None:
        self.core: UAVCore = env.unwrapped.game.core  # type: ignore[attr-defined]
        self.greedy = GreedyPolicy(self.core)
        self.futures, self.horizon, self.z = futures, horizon, z
        self.episode_steps = int(env.spec.max_episode_steps) if env.spec and env.spec.max_episode_steps else horizon
        self.rng = np.random.default_rng(seed)

    def plan(self) -> tuple[np.ndarray, np.ndarray]:
        """Each target's return on each future, (UEs + 1, futures), greedy's own move last, and
        the first move towards each target, (UEs + 1,)."""
        core, p, k = self.core, self.core.params, self.futures
        targets = p.n_ues + 1
        sim = UAVCore.of_rows(p, np.repeat(core.state_rows()[None], targets * k, axis=0))
        greedy = GreedyPolicy(sim)
        s = core.state
        target_x = np.repeat(np.append(s.ue_x, 0), k)[:, None]
        target_y = np.repeat(np.append(s.ue_y, 0), k)[:, None]
        flying = np.repeat(np.arange(targets) < p.n_ues, k)  # to its target; then greedy
        returns, first = np.zeros(len(flying)), greedy.act()
        for t in range(min(self.horizon, self.episode_steps - int(core.steps))):
            dx, dy = (target_x - sim.state.uav_x)[:, 0], (target_y - sim.state.uav_y)[:, 0]
            flying &= np.hypot(dx, dy) >= p.speed
            moves = np.where(flying, heading_to_action(NUMPY, dx, dy), greedy.act())
            first = moves if t == 0 else first
            # The same k futures for every target: their differences are the targets', not luck's.
            draws = np.tile(self.rng.random((k, 2, p.n_ues)), (targets, 1, 1))
            reward, _, _ = sim.step(moves, sim.request_classes(draws, p.request_prob))
            returns += reward
        return returns.reshape(targets, k), first[::k]

    def act(self) -> int:
        returns, first = self.plan()
        gains = returns - returns[-1]
        mean, error = gains.mean(axis=1), gains.std(axis=1, ddof=1) / np.sqrt(self.futures)
        best = int(mean.argmax())
        return int(first[best] if mean[best] > self.z * error[best] else first[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = Parser(prog="python -m benchmarks.uav_search", description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20, help="episodes, each played by greedy and the search")
    parser.add_argument("--futures", type=int, default=32, help="sampled futures each target is played on")
    parser.add_argument("--horizon", type=int, default=100, help="steps each future is played on")
    parser.add_argument("--z", type=float, default=2.0, help="standard errors a target's gain must clear")
    parser.add_argument("--seed", type=int, default=0, help="the search's own generator")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--episodes", args.episodes, (1, 100_000)), ("--futures", args.futures, (2, 4096))])
    check_ranges([("--horizon", args.horizon, (1, 100_000)), ("--seed", args.seed, (0, 2**63 - 1))])
    if not np.isfinite(args.z) or args.z < 0:
        raise UsageError(f"--z must be a finite number >= 0, got {args.z}")
    env = gym.make("UAVGrid-v0")
    search = RouteSearch(env, args.futures, args.horizon, args.z, args.seed)
    rows: list[dict[str, Any]] = []
    with closing(Console(2 * args.episodes, unit="episode", enabled=not args.no_progress)) as console:
        console.write(f"UAVGrid-v0, {args.futures} futures of {args.horizon} steps, z {args.z}: {machine()}")
        console.write(row("episode", "greedy", "the search", "the search / greedy"))
        console.write(row("---:", "---:", "---:", "---:"))
        for k in range(args.episodes):
            seed = SCORE_SEED + k
            greedy_return = float(played_returns(env, lambda _: search.greedy.act(), [seed])[0])
            console.update(2 * k + 1)
            search_return = float(played_returns(env, lambda _: search.act(), [seed])[0])
            console.update(2 * k + 2)
            rows.append({"episode": seed, "greedy": greedy_return, "search": search_return})
            console.write(row(seed, f"{greedy_return:.2f}", f"{search_return:.2f}", f"{search_return / greedy_return:.3f}"))
        greedy_returns = np.array([r["greedy"] for r in rows])
        differences = np.array([r["search"] for r in rows]) - greedy_returns
        error = float(differences.std(ddof=1) / np.sqrt(len(rows))) if len(rows) > 1 else float("nan")
        ratio = 1.0 + differences.mean() / greedy_returns.mean()
        console.write(
            f"mean: greedy {greedy_returns.mean():.2f}, the search {greedy_returns.mean() + differences.mean():.2f} "
            f"({ratio:.3f}x; its return minus greedy's {differences.mean():+.2f} +- {error:.2f})"
        )
    env.close()
    payload = {"machine": machine(), "args": vars(args), "episodes": rows, "ratio": float(ratio)}
    write_json("uav_search", payload)
    return payload


if __name__ == "__main__":
    sys.exit(run_cli(main))
