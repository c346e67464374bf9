"""BallDuel-v0's vector step against the same env at an earlier commit, side by side.

    python -m benchmarks.against_commit [--commit 46d5471] [--pairs 12] [--envs 256]

The commit is checked out into a temporary git worktree. Each process imports one tree's
``ballenvs``, steps ``gym.make_vec("BallDuel-v0", envs, vectorization_mode="vector_entry_point",
obs_type="state")`` with the same random actions, and prints its best of ``--rounds`` rounds. The
two trees take turns, ``--pairs`` times. The figure is the median of the pairs' ratios (this tree
over the commit): under 1 is faster. Rules added since the commit (BallSumo's slope and clock)
must cost BallDuel-v0 nothing while they are off.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, machine, progress_flag

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter with the tree first on sys.path; prints microseconds per vector step.
STEPPER = """
import sys, time, warnings
warnings.filterwarnings("ignore")
tree, envs, rounds, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, tree)
import gymnasium as gym, numpy as np
import ballenvs
assert ballenvs.__file__.startswith(tree), ballenvs.__file__
env = gym.make_vec("BallDuel-v0", envs, vectorization_mode="vector_entry_point", obs_type="state")
env.reset(seed=0)
actions = np.random.default_rng(0).integers(0, 9, size=(steps, envs))
best = float("inf")
for _ in range(rounds):
    start = time.perf_counter()
    for action in actions:
        env.step(action)
    best = min(best, (time.perf_counter() - start) / steps)
print(best * 1e6)
"""


def step_us(tree: Path, envs: int, rounds: int, steps: int) -> float:
    args = [sys.executable, "-c", STEPPER, str(tree), str(envs), str(rounds), str(steps)]
    return float(subprocess.run(args, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def worktrees() -> list[str]:
    """The repository's worktrees (the benchmark removes the one it adds)."""
    return [line for line in git("worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]


def main(argv: list[str] | None = None) -> None:
    parser = Parser(prog="python -m benchmarks.against_commit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default="46d5471", help="the earlier commit (default: 46d5471, before BallSumo)")
    parser.add_argument("--pairs", type=int, default=12, help="processes of each tree, in turn")
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds in each process (its best counts)")
    parser.add_argument("--steps", type=int, default=1000, help="vector steps in a round")
    progress_flag(parser)
    args = parser.parse_args(argv)
    for name in ("pairs", "envs", "rounds", "steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        git("rev-parse", "--verify", "--quiet", f"{args.commit}^{{commit}}")
    except subprocess.CalledProcessError:
        parser.error(f"--commit {args.commit!r} is not a commit of this repository")
    with tempfile.TemporaryDirectory() as scratch:
        earlier = Path(scratch) / "tree"
        git("worktree", "add", "--detach", str(earlier), args.commit)
        pairs = []
        try:
            with Measurements(args.pairs, not args.no_progress) as shown:
                for _ in range(args.pairs):
                    pairs.append(
                        (
                            step_us(ROOT, args.envs, args.rounds, args.steps),
                            step_us(earlier, args.envs, args.rounds, args.steps),
                        )
                    )
                    shown.result(f"pair {len(pairs)}: {pairs[-1][0]:.1f} us against {pairs[-1][1]:.1f} us a vector step")
        finally:
            git("worktree", "remove", "--force", str(earlier))
    ours, theirs = ([pair[i] for pair in pairs] for i in (0, 1))
    print(f"{machine()}; {args.envs} envs, state observation, {args.pairs} pairs of processes in turn")
    print(f"this tree: median {statistics.median(ours):.1f} us a vector step, best {min(ours):.1f}")
    print(f"{args.commit}: median {statistics.median(theirs):.1f} us, best {min(theirs):.1f}")
    ratio = statistics.median(a / b for a, b in pairs)
    print(f"median of the pairs' ratios (this tree / {args.commit}): {ratio:.3f}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
