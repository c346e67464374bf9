"""The docs' example figures, drawn by the documented commands at a small budget, so that the
pages show what the commands write and stay in step with them:

    python -m benchmarks.docs_figures                # about 10 minutes on 2 cores, the probe 6 of them
    python -m benchmarks.docs_figures --out DIR --timesteps 6000 --seeds 1 --games 4 \
        --probe-games 5 --probe-epochs 1 --probe-sizes 36                     # a smoke pass
    python -m benchmarks.docs_figures --only probe                              # one of them

- ``example_curves.png`` and ``example_profiles.png``: ``agents.compare --agents custom pqn`` on
  UAVGrid-v0, ``--seeds`` seeds (3), ``--timesteps`` each (Evaluating);
- ``example_elo.png``: ``agents.league`` of the yardstick players (the built-ins the tools play in
  turn) on BallSumo-v0, ``--games`` a pair (Two players);
- ``example_probe.png``: ``benchmarks.frame_probe --plot`` on 36x36 and 64x64 frames (``--probe-sizes``),
  1, 2 and 4 stacked, ``--probe-games`` a pair of players, ``--probe-epochs`` passes (Two players).

They go to benchmarks/figures (``--out``), which the docs serve.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from unittest import mock

from agents import compare, league
from agents.artifacts.runs import atomic_path, check_output_file
from agents.session.cli import Parser, run_cli
from ballenvs.duel.roster import YARDSTICK_PLAYERS
from benchmarks import frame_probe
from benchmarks.common import check_ranges, progress_flag
from benchmarks.frame_probe import HELD_OUT_EVERY, MAX_PROBE_GAMES

FIGURES = Path(__file__).resolve().parent / "figures"
#: Each set of figures and the pictures it writes (``--out``/example_<name>.png).
FIGURES_OF = {"compare": ("curves", "profiles"), "league": ("elo",), "probe": ("probe",)}
FIGURE_SETS = tuple(FIGURES_OF)


def _copy(source: Path, target: Path) -> Path:
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)
    return target


def main(argv: list[str] | None = None) -> list[Path]:
    parser = Parser(prog="python -m benchmarks.docs_figures", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(FIGURES), help="the folder the figures go to (default: benchmarks/figures)")
    parser.add_argument("--timesteps", type=int, default=60_000, help="env steps of each compared run (default: 60000)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds of each compared agent (default: 3)")
    parser.add_argument("--games", type=int, default=40, help="games of each pair in the league (default: 40)")
    parser.add_argument("--probe-games", type=int, default=12, help="games the probe records a pair of players (default: 12)")
    parser.add_argument("--probe-epochs", type=int, default=6, help="passes of the probe over its games (default: 6)")
    parser.add_argument(
        "--probe-sizes",
        type=int,
        nargs="+",
        default=[36, 64],
        choices=[36, 64],
        help="frame sizes the probe reads (default: 36 64)",
    )
    parser.add_argument("--only", nargs="+", choices=FIGURE_SETS, default=list(FIGURE_SETS), help="these figures alone")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [
            ("--timesteps", args.timesteps, (1_000, 10_000_000)),
            ("--seeds", args.seeds, (1, 100)),
            ("--games", args.games, (2, 10_000)),
        ]
        + [
            ("--probe-games", args.probe_games, (HELD_OUT_EVERY, MAX_PROBE_GAMES)),
            ("--probe-epochs", args.probe_epochs, (1, 1000)),
        ]
    )
    out = Path(args.out)
    if not out.is_dir():
        parser.error(f"--out {args.out!r}: no such folder")
    for name in (figure for only in args.only for figure in FIGURES_OF[only]):  # writable before any work is done
        check_output_file(out / f"example_{name}.png", "--out", (".png",))
    quiet = ["--no-progress"] if args.no_progress else []
    written = []
    with tempfile.TemporaryDirectory(prefix="ballenvs-docs-figures-") as scratch:
        work = Path(scratch)
        if "compare" in args.only:
            compare.main(
                [
                    "--env",
                    "UAVGrid-v0",
                    "--agents",
                    "custom",
                    "pqn",
                    "--seeds",
                    str(args.seeds),
                    "--timesteps",
                    str(args.timesteps),
                ]
                + ["--score-episodes", "10", "--log-dir", str(work), *quiet]
            )
            [compared] = (work / "compare").iterdir()
            for name in FIGURES_OF["compare"]:
                written.append(_copy(compared / f"{name}.png", out / f"example_{name}.png"))
        if "league" in args.only:
            league_argv = [*YARDSTICK_PLAYERS, "--env", "BallSumo-v0", "--games", str(args.games)]
            league_argv += ["--log-dir", str(work), *quiet]
            written.append(_copy(league.main(league_argv) / "elo.png", out / "example_elo.png"))
        if "probe" in args.only:
            # Its JSON goes to the scratch folder: benchmarks/frame_probe.json keeps the full-size figures.
            with mock.patch.dict(os.environ, {"BALLENVS_BENCH_OUT": str(work)}):
                frame_probe.main(
                    ["--sizes", *map(str, args.probe_sizes), "--stacks", "1", "2", "4", "--games", str(args.probe_games)]
                    + ["--epochs", str(args.probe_epochs)]
                    + ["--plot", str(work / "probe.png"), *quiet]
                )
            written.append(_copy(work / "probe.png", out / "example_probe.png"))
    print("wrote " + ", ".join(str(path) for path in written))
    return written


if __name__ == "__main__":
    sys.exit(run_cli(main))
