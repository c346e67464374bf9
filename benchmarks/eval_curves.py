"""Each run's evaluations against its training steps, one line per run (seed), from the
``progress.csv`` the trainers write: win rates in percent beside the 90% line, any other column
as it is. The README's learning figures are drawn with it:

    python -m benchmarks.eval_curves runs/dqn/BallDuel-v0_1 runs/dqn/BallDuel-v0_2 --out curves.png
    python -m benchmarks.eval_curves RUN --metric eval/win_rate_vs_pusher eval/win_rate_vs_anchor --out v1.png
    python -m benchmarks.eval_curves RUN_A RUN_B --labels start-0.5 start-0.25 --metric ... --out runs.png

A learning claim judges final models; these curves show whether a run settled on the way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from agents.artifacts.figures import pyplot, save_png
from agents.artifacts.runs import check_output_file, read_config
from agents.common.errors import UsageError
from agents.common.readers import csv_number, csv_rows
from agents.session.cli import Parser, run_cli


def read_curve(run_dir: Path, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The (steps, values) of one progress.csv column, on the rows that have it."""
    path = run_dir / "progress.csv"
    if not path.is_file():
        raise UsageError(f"{str(run_dir)!r}: no progress.csv (not a run folder?)")
    rows = [row for row in csv_rows(path, "progress file") if row.get(metric)]
    if not rows:
        raise UsageError(f"{str(run_dir)!r}: no {metric!r} in its progress.csv (was it evaluated?)")
    what = f"{str(path)!r}"
    steps = [csv_number(row, "time/total_timesteps", what) for row in rows]
    return np.array(steps), np.array([csv_number(row, metric, what) for row in rows])


def main(argv: list[str] | None = None) -> Path:
    parser = Parser(prog="python -m benchmarks.eval_curves", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders")
    parser.add_argument("--metric", nargs="+", default=["eval/win_rate"], help="progress.csv columns (default: eval/win_rate)")
    parser.add_argument("--out", required=True, help="the .png to write")
    parser.add_argument("--labels", nargs="+", default=None, help="a legend label per run (default: algorithm and seed)")
    args = parser.parse_args(argv)
    out = check_output_file(args.out, "--out", (".png",))
    if args.labels is not None and len(args.labels) != len(args.runs):
        raise UsageError(f"--labels: {len(args.labels)} labels for {len(args.runs)} runs; give one per run")
    # Every curve read before anything is drawn: a missing one is refused with nothing written.
    curves = {(run, metric): read_curve(Path(run), metric) for run in args.runs for metric in args.metric}
    configs = {run: read_config(Path(run)) for run in args.runs}
    labels = {run: f"{configs[run]['algo']} seed {configs[run]['seed']}" for run in args.runs}
    if args.labels is not None:
        labels = dict(zip(args.runs, args.labels))
    env_ids = sorted({str(config["env_id"]) for config in configs.values()})
    save_png(curves_figure(curves, args.runs, args.metric, labels, env_ids), out, dpi=80)
    print(f"wrote {out}")
    return out


def is_win_rate(metric: str) -> bool:
    return "win_rate" in metric


def curves_figure(
    curves: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    runs: list[str],
    metrics: list[str],
    labels: dict[str, str],
    env_ids: list[str],
) -> Any:
    """One panel per metric, one line per run; win rates in percent with the 90% line, any other
    metric as progress.csv has it. The title names the env(s)."""
    fig, axes = pyplot().subplots(1, len(metrics), figsize=(6 * len(metrics), 4), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        wins = is_win_rate(metric)
        for run in runs:
            steps, values = curves[run, metric]
            ax.plot(steps, 100 * values if wins else values, marker="o", markersize=3, label=labels[run])
        if wins:
            ax.axhline(90, linestyle="--", color="grey", linewidth=1)
            ax.set_ylim(-5, 105)
        ax.set_title(metric)
        ax.set_xlabel("env steps")
        ax.set_ylabel(f"{metric} (% of evaluation games)" if wins else metric)
        ax.grid(alpha=0.3)
        ax.legend(loc="best")
    fig.suptitle(f"Evaluations during training on {', '.join(env_ids)}")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    sys.exit(run_cli(main))
