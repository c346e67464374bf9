"""Time to skill: how long each learner's shipped self-play section takes, from nothing, until one
of its evaluations wins at least ``--threshold`` of its games against every built-in player named,
side by side in one run of this benchmark (one learner at a time, one thread each):

    python -m benchmarks.time_to_skill [--learners custom rllib_ppo] [--seeds 0 1 2] [--env BallSumo-v0]
                                       [--eval-freq 25000] [--eval-episodes 100] [--log-dir runs]
                                       [--until-skilled] [--level-vs champion --level 0.4]

``--level-vs champion``: the planner's level instead, the first evaluation at ``--level`` (0.4)
against the champion while at the threshold against the rest (between strong players the seat
splits nearly every start, so half is level).

Each run is ``python -m agents.train --algo L --env ENV --seed S --threads 1`` with evaluations
every ``--eval-freq`` env steps (``--eval-episodes`` games against each built-in, as every run's
evaluations are played). From its progress.csv: the wall-clock and env steps of the first
evaluation at or above the threshold against every opponent, whether the last evaluation (the
final model's) still is, and the gap between the best evaluation's win rates (the best model's)
and the last one's. Writes ``time_to_skill.json`` (each evaluation of each run), a table, and a
figure of the win rates over wall-clock, a panel per learner (``--plot``). ``--log-dir`` keeps
the runs (``time_to_skill/<learner>_<seed>/``), whose final models ``agents.evaluate`` then judges.

The learners take turns seed by seed (custom 0, rllib_ppo 0, custom 1, ...), so that a change in the
machine's load falls on both alike, and the JSON is rewritten after every run, so a benchmark cut
short keeps what it measured. ``--until-skilled`` stops each run at its first evaluation at the
threshold against every opponent (SIGTERM, as a job scheduler stops a run; it saves what it has):
the time to skill for a part of each run's cost; whether the final model holds it is then not judged.
"""

from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.artifacts.figures import pyplot, save_png
from agents.artifacts.runs import check_log_dir, check_output_file
from agents.common.configuration.registry import ALGORITHMS
from agents.common.errors import UsageError, refuse_repeats
from agents.environments.ids import check_two_player_env
from agents.session.cli import Parser, run_cli
from agents.session.evaluation import score
from ballenvs.reference import reference_for
from benchmarks.common import Measurements, check_ranges, children_stopped, machine, progress_flag, row, write_json

#: The built-ins its issue named (the champion then: the first one, now dqn_champion).
OPPONENTS = ("chaser", "pusher", "anchor", "sprinter", "dqn_champion")
LEARNERS = ("custom", "rllib_ppo")


def train_command(algo: str, env_id: str, seed: int, args: Any, log_dir: Path) -> list[str]:
    command = [sys.executable, "-m", "agents.train", "--algo", algo, "--env", env_id, "--seed", str(seed)]
    command += ["--threads", "1", "--eval-freq", str(args.eval_freq), "--eval-episodes", str(args.eval_episodes)]
    command += ["--save-freq", "0", "--no-progress", "--log-dir", str(log_dir)]
    command += ["--hyperparams", *args.hyperparams] if args.hyperparams else []
    return command + (["--timesteps", str(args.timesteps)] if args.timesteps else [])


def check_learner(learner: str, args: Any) -> None:
    """The run this benchmark would start for ``learner``, checked in this process as the trainer
    checks it (its section, its keys, Ray for rllib_ppo), and a self-play run: only one is evaluated
    against the built-ins, whose win rates this benchmark reads."""
    from agents.trainer.run import prepare

    argv = train_command(learner, args.env, args.seeds[0], args, Path("."))[3:]  # past python -m agents.train
    try:
        setup = prepare(argv, make_folder=False)[1]
    except UsageError as error:
        raise UsageError(f"--learners {learner}: {error}") from None
    if setup.self_play is None:
        raise UsageError(
            f"--learners {learner}: its {args.env} section does not train by self-play; time to skill reads a self-play "
            "run's evaluations against the built-ins (BallSumo-v0's sections do)"
        )


#: Seconds between looks at a running run's progress.csv under ``--until-skilled``.
POLL_SECONDS = 2.0


def train_once(learner: str, seed: int, args: Any, log_dir: Path) -> tuple[Path, bool]:
    """One run of ``learner``, one thread, in a process of its own: its run folder, and whether it
    was stopped before its end: under ``args.until_skilled``, at its first evaluation at
    ``args.threshold`` against every one of ``args.opponents``."""
    command = train_command(learner, args.env, seed, args, log_dir)
    with tempfile.TemporaryFile("w+") as stderr, children_stopped([]) as children:
        process = subprocess.Popen(
            command, env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL, stderr=stderr, text=True
        )
        children.append(process)
        stopped = False
        while process.poll() is None:
            if args.until_skilled and not stopped and skilled_yet(log_dir / learner, args):
                process.send_signal(signal.SIGTERM)
                stopped = True
            time.sleep(POLL_SECONDS)
        stderr.seek(0)
        lines = stderr.read().strip().splitlines() or ["?"]
    if not ended_as_asked(process.returncode, stopped):
        raise UsageError(f"{learner} seed {seed} failed: {lines[-1]}")
    [run_dir] = (log_dir / learner).iterdir()
    return run_dir, stopped


def ended_as_asked(returncode: int, stopped: bool) -> bool:
    """A run that ends by itself exits 0; one stopped at skill exits 143 once its trainer has saved,
    or dies of the signal (-15) where it lands as the run is already closing (skill at its last
    evaluation: RLlib PPO's seed 1, at 2M steps of 2M)."""
    return returncode == 0 or (stopped and returncode in (128 + signal.SIGTERM, -signal.SIGTERM))


def skilled_yet(runs: Path, args: Any) -> bool:
    """Whether the run under ``runs`` has had an evaluation at the threshold against every opponent."""
    found = list(runs.glob("*/progress.csv")) if runs.is_dir() else []
    if not found:
        return False
    levels = levels_of(args)
    try:
        evals = evaluations(found[0].parent, (*args.opponents, *levels))
    except (UsageError, ValueError, KeyError):  # no evaluation yet, or a row being written
        return False
    return skill(evals, args.threshold, levels=levels)["seconds"] is not None


def levels_of(args: Any) -> dict[str, float]:
    """``--level-vs``'s players, each with ``--level`` as the rate that counts against it."""
    return {name: args.level for name in getattr(args, "level_vs", None) or []}


def evaluations(run_dir: Path, opponents: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each evaluation of a run, in order: its env steps, seconds since the run began, mean
    return and win rate against each opponent."""
    with open(run_dir / "progress.csv", newline="") as file:
        rows = [r for r in csv.DictReader(file) if r.get("eval/mean_reward")]
    missing = [name for name in opponents if rows and not rows[0].get(f"eval/win_rate_vs_{name}")]
    if not rows or missing:
        raise UsageError(f"{str(run_dir)!r}: no evaluations against {', '.join(missing or opponents)} in its progress.csv")
    return [
        {
            "steps": int(float(r["time/total_timesteps"])),
            "seconds": float(r["time/time_elapsed"]),
            "mean_reward": float(r["eval/mean_reward"]),
            "win_rates": {name: float(r[f"eval/win_rate_vs_{name}"]) for name in opponents},
        }
        for r in rows
    ]


def reached(evaluation: dict[str, Any], threshold: float, levels: dict[str, float] | None = None) -> bool:
    """Whether an evaluation is skilled: at ``threshold`` against every opponent but those ``levels``
    names, and at least its rate against each of those (the planner's level: 0.4 against the
    champion, where the seat splits nearly every start between strong players)."""
    levels = levels or {}
    rates = evaluation["win_rates"]
    rest = [rate for name, rate in rates.items() if name not in levels]
    return all(rate >= threshold for rate in rest) and all(rates[name] >= level for name, level in levels.items())


def skill(
    evals: list[dict[str, Any]],
    threshold: float,
    whole_run: bool = True,
    levels: dict[str, float] | None = None,
    held_out: tuple[str, ...] = (),
) -> dict[str, Any]:
    """When the run first reached skill (:func:`reached`; None: never), whether its last evaluation
    holds it, and the best evaluation's (as the run chose its best model:
    :func:`agents.session.evaluation.score` over all but ``held_out``, the later of equals) largest gap to the
    last one against any opponent, in points; the last two None where the run
    was stopped at skill (not ``whole_run``): its last evaluation is then not a final model's."""
    first = next((e for e in evals if reached(e, threshold, levels)), None)
    best = max(reversed(evals), key=lambda e: score(e["mean_reward"], e["win_rates"], held_out))  # max keeps the first
    last = evals[-1]
    gap = 100 * max(abs(best["win_rates"][k] - last["win_rates"][k]) for k in last["win_rates"])
    return {
        "seconds": None if first is None else first["seconds"],
        "steps": None if first is None else first["steps"],
        "final_holds": reached(last, threshold, levels) if whole_run else None,
        "final_win_rates": last["win_rates"],
        "best_final_gap": gap if whole_run else None,
        "wall": last["seconds"],
    }


def median_seconds(results: list[dict[str, Any]]) -> float:
    """The median time to skill over seeds, a seed that never got there counted as infinite."""
    return float(np.median([math.inf if r["seconds"] is None else r["seconds"] for r in results]))


def ratios_to_first(medians: dict[str, float], learners: list[str]) -> dict[str, float]:
    """The first learner's median time to skill over each other's, where both got there."""
    first = medians.get(learners[0], math.inf)
    return {
        other: first / medians[other]
        for other in learners[1:]
        if not math.isinf(first) and not math.isinf(medians.get(other, math.inf))
    }


def plot(
    runs: dict[str, list[list[dict[str, Any]]]],
    opponents: tuple[str, ...],
    threshold: float,
    env_id: str,
    levels: dict[str, float] | None = None,
) -> Any:
    plt = pyplot()
    figure, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 4), sharey=True, squeeze=False)
    colours = dict(zip(opponents, plt.get_cmap("tab10").colors))
    for axis, (learner, seeds) in zip(axes[0], runs.items()):
        for k, evals in enumerate(seeds):
            seconds = [e["seconds"] for e in evals]
            for name in opponents:
                label = name if k == 0 else None
                axis.plot(
                    seconds, [100 * e["win_rates"][name] for e in evals], ".-", color=colours[name], alpha=0.8, label=label
                )
        axis.axhline(100 * threshold, color="grey", linestyle="--", linewidth=1)
        for level in set((levels or {}).values()):
            axis.axhline(100 * level, color="grey", linestyle=":", linewidth=1)
        axis.set(
            title=f"{learner} ({len(seeds)} seed{'s' if len(seeds) != 1 else ''})",
            xlabel="wall-clock (s), one thread",
            ylim=(-2, 102),
        )
    axes[0][0].set_ylabel(f"evaluation win rate on {env_id} (%)")
    axes[0][0].legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = Parser(prog="python -m benchmarks.time_to_skill", description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), help="algorithms (default: custom rllib_ppo)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="seeds (default: 0 1 2)")
    parser.add_argument(
        "--env", default="BallSumo-v0", help="a two-player env id with a self-play section (default: BallSumo-v0)"
    )
    parser.add_argument("--opponents", nargs="+", default=list(OPPONENTS), help="built-in players to beat")
    parser.add_argument("--threshold", type=float, default=0.9, help="the win rate that counts as skill (default: 0.9)")
    parser.add_argument(
        "--level-vs",
        nargs="+",
        default=[],
        metavar="PLAYER",
        help="the planner's level: these players too, against whom --level counts rather than --threshold "
        "(e.g. --level-vs champion: >= 40%% against the champion while >= 90%% against the rest)",
    )
    parser.add_argument("--level", type=float, default=0.4, help="the win rate against --level-vs (default: 0.4)")
    parser.add_argument("--eval-freq", type=int, default=25_000, help="env steps between evaluations (default: 25000)")
    parser.add_argument("--eval-episodes", type=int, default=100, help="games against each built-in (default: 100)")
    parser.add_argument("--timesteps", type=int, default=0, help="env steps of each run (default: its section's)")
    parser.add_argument(
        "--hyperparams", nargs="*", action="extend", default=[], metavar="KEY=VALUE", help="each run's changes to its section"
    )
    parser.add_argument("--plot", default=None, help="a .png to draw the win rates over wall-clock in")
    parser.add_argument(
        "--until-skilled", action="store_true", help="stop each run at its first evaluation at the threshold against all"
    )
    parser.add_argument("--log-dir", default=None, help="keep the runs here, <learner>_<seed>/ (default: a temporary folder)")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(
        [("--seeds", args.seeds, (0, 2**31)), ("--eval-freq", args.eval_freq, (100, 10_000_000))]
        + [("--eval-episodes", args.eval_episodes, (2, 10_000)), ("--timesteps", args.timesteps, (0, 100_000_000))]
    )
    for flag, rate in (("--threshold", args.threshold), ("--level", args.level)):
        if not 0 < rate <= 1:
            raise UsageError(f"{flag} must be in (0, 1], got {rate}")
    check_two_player_env(args.env)
    named = [("--learners", args.learners), ("--seeds", args.seeds), ("--opponents", args.opponents)]
    for flag, names in [*named, ("--level-vs", args.level_vs)]:
        refuse_repeats(flag, [str(name) for name in names])  # a learner twice would train into one folder
    unknown = [name for name in args.learners if name not in ALGORITHMS]
    if unknown:
        raise UsageError(f"--learners {unknown[0]!r}: not an algorithm; valid: {', '.join(ALGORITHMS)}")
    players = reference_for(args.env).players
    for flag, names in (("--opponents", args.opponents), ("--level-vs", args.level_vs)):
        strangers = [name for name in names if name not in players]
        if strangers:
            raise UsageError(f"{flag} {strangers[0]!r}: not a built-in player of {args.env}; valid: {', '.join(players)}")
    both = sorted(set(args.opponents) & set(args.level_vs))
    if both:
        raise UsageError(f"--level-vs {both[0]!r} is also in --opponents: a player counts at one rate")
    out = None if args.plot is None else check_output_file(args.plot, "--plot", (".png",))
    if args.log_dir is not None and not args.log_dir.strip():
        raise UsageError("--log-dir '': name a folder (the default keeps the runs in a temporary one)")
    for learner in args.learners:  # every run checked before the first one starts
        check_learner(learner, args)
    levels = levels_of(args)
    opponents = (*args.opponents, *levels)
    runs: dict[str, list[list[dict[str, Any]]]] = {learner: [] for learner in args.learners}
    results: dict[str, list[dict[str, Any]]] = {learner: [] for learner in args.learners}
    if args.log_dir is not None:
        check_log_dir(args.log_dir, "time_to_skill")

    def payload() -> dict[str, Any]:
        medians = {learner: median_seconds(found) for learner, found in results.items() if found}
        return {
            "machine": machine(),
            "env_id": args.env,
            "opponents": list(opponents),
            "threshold": args.threshold,
            "levels": levels,
            "eval_freq": args.eval_freq,
            "eval_episodes": args.eval_episodes,
            "until_skilled": args.until_skilled,
            "complete": sum(map(len, results.values())) == len(args.learners) * len(args.seeds),
            "results": results,
            "medians": {k: (None if math.isinf(v) else v) for k, v in medians.items()},
            "ratios": ratios_to_first(medians, args.learners),
            "evaluations": runs,
        }

    held_out = reference_for(args.env).held_out_players  # as the runs kept their best models
    with tempfile.TemporaryDirectory(prefix="ballenvs-time-to-skill-") as scratch:
        runs_in = Path(scratch) if args.log_dir is None else Path(args.log_dir) / "time_to_skill"
        with Measurements(len(args.learners) * len(args.seeds), not args.no_progress) as shown:
            for seed in args.seeds:
                for learner in args.learners:
                    run_dir, stopped = train_once(learner, seed, args, runs_in / f"{learner}_{seed}")
                    evals = evaluations(run_dir, opponents)
                    runs[learner].append(evals)
                    found = {"seed": seed, **skill(evals, args.threshold, not stopped, levels, held_out)}
                    results[learner].append(found)
                    written = write_json("time_to_skill", payload())
                    reached = "never" if found["seconds"] is None else f"{found['seconds']:.0f} s, {found['steps']:,} steps"
                    shown.result(f"{learner} seed {seed}: {reached}; wall {found['wall']:.0f} s")
    print(row("learner", "seed", "time to skill", "env steps", "final holds", "best-final gap", "wall", "final win rates (%)"))
    print(row(*["---"] * 8))
    for learner in args.learners:
        for r in results[learner]:
            rates = " / ".join(f"{100 * r['final_win_rates'][k]:.0f}" for k in opponents)
            reached = "never" if r["seconds"] is None else f"{r['seconds']:.0f} s"
            steps = "-" if r["steps"] is None else f"{r['steps']:,}"
            holds = "stopped at skill" if r["final_holds"] is None else r["final_holds"]
            gap = "-" if r["best_final_gap"] is None else f"{r['best_final_gap']:.0f}"
            print(row(learner, r["seed"], reached, steps, holds, gap, f"{r['wall']:.0f} s", rates))
    measured = payload()
    for learner, median in measured["medians"].items():
        said = "never" if median is None else f"{median:.0f} s"
        print(f"{learner}: median time to skill {said} over seeds {args.seeds}")
    for learner, ratio in measured["ratios"].items():
        print(f"{args.learners[0]} / {learner}: {ratio:.2f}x the time to skill (medians, side by side)")
    print(f"wrote {written}")
    if out is not None:
        save_png(plot(runs, opponents, args.threshold, args.env, levels), out, dpi=80)
        print(f"wrote {out}")
    return measured


if __name__ == "__main__":
    sys.exit(run_cli(main))
