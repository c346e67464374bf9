"""The docs' example figures, drawn by the documented commands at a small budget, so that the
pages show what the commands write and stay in step with them:

    python -m benchmarks.docs_figures                # a few minutes on 2 cores
    python -m benchmarks.docs_figures --out DIR --timesteps 2000 --games 4   # a smoke pass

- ``example_curves.png`` and ``example_profiles.png``: ``agents.compare --agents custom pqn`` on
  UAVGrid-v0, 3 seeds, ``--timesteps`` each (Evaluating);
- ``example_elo.png``: ``agents.league`` of the built-in players but the planner on BallSumo-v0,
  ``--games`` a pair (Two players).

They go to benchmarks/figures (``--out``), which the docs serve.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from agents import compare, league
from agents.common.artifacts.runs import atomic_path
from agents.common.session.cli import Parser, run_cli
from benchmarks.common import check_ranges, progress_flag

FIGURES = Path(__file__).resolve().parent / "figures"
PLAYERS = ["still", "random", "chaser", "pusher", "anchor", "sprinter", "champion"]


def _copy(source: Path, target: Path) -> Path:
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)
    return target


def main(argv: list[str] | None = None) -> list[Path]:
    parser = Parser(prog="python -m benchmarks.docs_figures", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(FIGURES), help="the folder the figures go to (default: benchmarks/figures)")
    parser.add_argument("--timesteps", type=int, default=60_000, help="env steps of each compared run (default: 60000)")
    parser.add_argument("--games", type=int, default=40, help="games of each pair in the league (default: 40)")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--timesteps", args.timesteps, (1_000, 10_000_000)), ("--games", args.games, (2, 10_000))])
    out = Path(args.out)
    if not out.is_dir():
        parser.error(f"--out {args.out!r}: no such folder")
    quiet = ["--no-progress"] if args.no_progress else []
    written = []
    with tempfile.TemporaryDirectory(prefix="ballenvs-docs-figures-") as scratch:
        work = Path(scratch)
        compare.main(
            ["--env", "UAVGrid-v0", "--agents", "custom", "pqn", "--seeds", "3", "--timesteps", str(args.timesteps)]
            + ["--score-episodes", "10", "--log-dir", str(work), *quiet]
        )
        [compared] = (work / "compare").iterdir()
        for name in ("curves", "profiles"):
            written.append(_copy(compared / f"{name}.png", out / f"example_{name}.png"))
        rated = league.main([*PLAYERS, "--env", "BallSumo-v0", "--games", str(args.games), "--log-dir", str(work), *quiet])
        written.append(_copy(rated / "elo.png", out / "example_elo.png"))
    print("wrote " + ", ".join(str(path) for path in written))
    return written


if __name__ == "__main__":
    sys.exit(run_cli(main))
