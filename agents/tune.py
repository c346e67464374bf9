"""Hyperparameter search and seed sweeps on Optuna, in worker processes and across machines.

    python -m agents.tune --env UAVGrid-v0 --algo custom --trials 40 --workers 2 --timesteps 300000
    python -m agents.tune --env UAVGrid-v0 --algo dqn --trials 200 \\
        --storage postgresql://user:pass@db-host/ballenvs --study-name uav-dqn       # on every machine
    python -m agents.tune --report --storage ... --study-name uav-dqn                # table, plots, best section
    python -m agents.tune --seeds 3 --from-trial 12 --storage ... --study-name uav-dqn

Every trial is an ordinary run of an algorithm's trainer (``--algo``: a registered
algorithm, ``dqn`` through agents.sb3_train, ``custom`` and ``pqn`` through
agents.custom_train), in ``<log-dir>/<study>/trial_<n>/`` with its resolved config.yml, on
``--timesteps`` steps, with hyperparameters sampled from the algorithm's search space
(``zoo_configs/search.yml``, or ``--search-space FILE``) and the env's config section for the
rest. Its objective is its last evaluation's mean return; each evaluation is reported, so the
pruner (median by default) stops hopeless trials early.

Studies are Optuna's: with no ``--storage``, a journal file in the study's folder (processes
on one machine); with a PostgreSQL URL (``pip install "ballenvs[tune]"``), shared by workers
on any number of machines, a trial whose worker dies is failed by the heartbeat. Workers never
run a trial twice; re-running a command continues its study; ``--max-total-trials`` caps the
study over all its workers. ``--seeds K --from-trial N`` runs K seeds of trial N's
configuration (or of ``--params FILE``) through the same machinery, in the study
``<study>-seeds-<N>``, which ``agents.compare --from-study`` draws with its spread.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from agents.common.configuration.config import Key, parse_overrides
from agents.common.configuration.config_files import load_sections
from agents.common.configuration.registry import ALGORITHMS, Algorithm, algorithm
from agents.common.errors import UsageError, note
from agents.environments.ids import check_env_id
from agents.session.cli import Parser, Renamed, add_device_flags, add_progress_flag, check_seed, run_cli
from agents.studies.storage import check_study_name, load_existing_study, open_storage
from agents.studies.tuning import (
    HEARTBEAT_S,
    PRUNERS,
    SearchSpace,
    fail_orphaned_trials,
    load_space,
    run_workers,
    trial_argv,
    trial_threads,
    write_report,
)
from agents.trainer import run as train

DEFAULT_LOG_DIR = "runs/tune"


def parse(argv: list[str] | None) -> Any:
    parser = Parser(prog="python -m agents.tune", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("--env", default="UAVGrid-v0", help="environment id")
    parser.add_argument(
        "--algo",
        default="custom",
        help=f"the algorithm the trials train, as agents.train --algo: any of {', '.join(ALGORITHMS)}",
    )
    parser.add_argument("--trainer", action=Renamed, new="--algo", help=argparse.SUPPRESS)
    parser.add_argument("--trials", type=int, default=20, help="trials this command runs, over its workers")
    parser.add_argument("--workers", type=int, default=1, help="worker processes on this machine")
    parser.add_argument("--timesteps", type=int, default=300_000, help="each trial's step budget")
    parser.add_argument(
        "--eval-freq", type=int, default=None, help="steps between a trial's evaluations (default: a tenth of the budget)"
    )
    parser.add_argument("--eval-episodes", type=int, default=10, help="episodes per evaluation")
    parser.add_argument(
        "--storage", default=None, help="a PostgreSQL URL, or a journal .log file (default: the study's journal file)"
    )
    parser.add_argument("--study-name", default=None, help="default: <env>-<algo>")
    parser.add_argument("--log-dir", default=DEFAULT_LOG_DIR, help="where studies' trial folders and reports go")
    parser.add_argument("--pruner", choices=PRUNERS, default="median")
    parser.add_argument(
        "--search-space", default=None, metavar="FILE", help="a YAML search space (default: zoo_configs/search.yml)"
    )
    parser.add_argument(
        "--max-total-trials", type=int, default=None, help="stop the study at this many finished trials, over every worker"
    )
    parser.add_argument("--seed", type=int, default=None, help="seeds the samplers (worker k: seed + k)")
    parser.add_argument("--config", default=None, help="the hyperparameter file the trials start from")
    parser.add_argument("--hyperparams", nargs="*", default=[], metavar="KEY=VALUE", help="fixed for every trial")
    parser.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--n-envs", type=int, default=None)
    add_device_flags(parser)
    parser.add_argument("--heartbeat", type=int, default=HEARTBEAT_S, help="seconds between a database worker's heartbeats")
    parser.add_argument("--report", action="store_true", help="write the study's report, plots and best section; no training")
    parser.add_argument(
        "--seeds", type=int, default=None, help="run this many seeds of one configuration (--from-trial or --params)"
    )
    parser.add_argument("--from-trial", type=int, default=None, help="with --seeds: the trial whose configuration to run")
    parser.add_argument(
        "--params", default=None, metavar="FILE", help="with --seeds: a YAML mapping of hyperparameters to run"
    )
    add_progress_flag(parser, "each trial's result is still printed")
    args = parser.parse_args(argv)
    _check_args(args)
    return args


def _check_args(args: Any) -> None:
    """The flags' ranges and the combinations that go together."""
    for flag in ("trials", "workers", "timesteps", "eval_episodes", "heartbeat"):
        if getattr(args, flag) < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    for flag in ("max_total_trials", "seeds", "eval_freq", "n_envs"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.eval_freq is not None and args.eval_freq > args.timesteps:
        raise UsageError(
            f"--eval-freq {args.eval_freq} is past the budget (--timesteps {args.timesteps}): a trial needs an evaluation"
        )
    if args.seed is not None:
        check_seed(args.seed)
    if args.from_trial is not None and args.from_trial < 0:
        raise UsageError(f"--from-trial must be a trial number >= 0, got {args.from_trial}")
    if (args.from_trial is not None or args.params) and args.seeds is None:
        raise UsageError("--from-trial and --params go with --seeds")
    if args.seeds is not None and (args.from_trial is None) == (args.params is None):
        raise UsageError("--seeds needs one of --from-trial N or --params FILE")


def main(argv: list[str] | None = None) -> Path:
    import optuna

    args = parse(argv)
    check_env_id(args.env)
    algo = algorithm(args.algo)
    study_name = check_study_name(f"{args.env}-{args.algo}" if args.study_name is None else args.study_name)
    study_dir = Path(args.log_dir) / study_name
    if args.report:
        study = load_existing_study(study_name, args.storage, study_dir, args.heartbeat)
        print(write_report(study, study_dir / "report", study.user_attrs))
        print(f"wrote {study_dir / 'report'}: report.md, best.yml, history.png, parallel.png, importances.png")
        return study_dir
    space, source = load_space(algo, args.search_space)
    SearchSpace(space, algo, source)
    searched_and_fixed = sorted(set(space) & set(parse_overrides(args.hyperparams, "--hyperparams")))
    if searched_and_fixed:
        raise UsageError(
            f"--hyperparams fixes {', '.join(searched_and_fixed)}, which the search space ({source}) searches: drop one"
        )
    fixed = None
    if args.seeds is not None:
        fixed = _fixed_params(args, study_name, algo)
        study_name = f"{study_name}-seeds-{args.from_trial if args.from_trial is not None else Path(args.params).stem}"
        study_dir = Path(args.log_dir) / study_name
    plan = _plan(args, algo, study_name, study_dir, space, fixed)
    _check_trial_command(plan)
    storage = open_storage(args.storage, study_dir, args.heartbeat)
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # our own lines say what the study holds, after its checks
    study = optuna.create_study(study_name=study_name, storage=storage, direction="maximize", load_if_exists=True)
    _same_study(study, plan)
    fail_orphaned_trials(study)
    trials = args.seeds if fixed is not None else args.trials
    workers = f"{plan['workers']} worker(s)"
    if plan["workers"] < args.workers:
        workers += f" (--workers {args.workers}: one a trial)"
    note(f"study {study_name}: {len(study.trials)} trials so far; {trials} more, on {workers} -> {study_dir}")
    start = time.perf_counter()
    try:
        run_workers(plan, trials, train.main)
    except KeyboardInterrupt:
        print(
            f"study {study_name}: its finished trials are kept, a stopped trial's model is in its folder; "
            "the same command continues the study",
            file=sys.stderr,
        )
        raise
    finished = len([t for t in study.trials if t.state.is_finished()])
    print(f"{trials} trials in {time.perf_counter() - start:.0f} s; the study has {finished} finished. Report: --report")
    return study_dir


def _plan(
    args: Any,
    algo: Algorithm,
    study_name: str,
    study_dir: Path,
    space: dict[str, Any],
    fixed: dict[str, Any] | None,
) -> dict[str, Any]:
    """What every worker needs to run the study's trials (a plain dict: it crosses to spawned processes)."""
    extra = [*(["--config", args.config] if args.config else []), *(["--n-envs", str(args.n_envs)] if args.n_envs else [])]
    extra += ["--env-kwargs", *args.env_kwargs]
    workers = min(args.workers, args.seeds if fixed is not None else args.trials)  # a worker with no trial is none
    return {
        "env": args.env,
        "trainer": args.algo,  # the name studies have recorded it under since --algo was --trainer
        "algo": algo.name,
        "timesteps": args.timesteps,
        "eval_freq": args.eval_freq or max(args.timesteps // 10, 1),
        "eval_episodes": args.eval_episodes,
        "device": args.device,
        "threads": trial_threads(args.threads, workers),
        "extra": extra,
        "hyperparams": list(args.hyperparams),
        "storage": args.storage,
        "study": study_name,
        "study_dir": str(study_dir),
        "workers": workers,
        "heartbeat": args.heartbeat,
        "pruner": "none" if fixed is not None else args.pruner,
        "max_total_trials": args.max_total_trials,
        "seed": args.seed,
        "space": space,
        "fixed": fixed,
        "config": args.config,
        "progress": not args.no_progress,
    }


def _check_trial_command(plan: dict[str, Any]) -> None:
    """The trainer checks a trial's command line (the search space's first values) before any trial runs."""

    first = {
        name: spec["choices"][0] if spec["type"] == "categorical" else spec["low"] for name, spec in plan["space"].items()
    }
    params = (
        plan["fixed"]
        if plan["fixed"] is not None
        else {k: SearchSpace._scheduled(plan["space"][k], v) for k, v in first.items()}
    )
    # A budget that ends before learning starts is refused there too: the trials would rank untrained networks.
    train.prepare(trial_argv(plan, params, 0, Path(plan["study_dir"])), make_folder=False)


_RECORDED = ("env", "trainer", "algo", "timesteps", "space", "fixed", "hyperparams", "extra", "config", "study")


def _same_study(study: Any, plan: dict[str, Any]) -> None:
    """A study keeps what its trials ran with: a command that would change it is refused."""
    recorded = study.user_attrs
    if not recorded:
        for key in _RECORDED:
            study.set_user_attr(key, plan[key])
        return
    changed = [key for key in _RECORDED if recorded.get(key) != plan[key]]
    if changed:
        raise UsageError(f"study {plan['study']!r} ran with other {', '.join(changed)}; use another --study-name for these")


def _fixed_params(args: Any, study_name: str, algo: Algorithm) -> dict[str, Any]:
    import optuna

    if args.params:
        params = load_sections(args.params)
        for name, value in params.items():
            if name not in algo.keys:
                raise UsageError(f"--params {args.params!r}: {name!r} is not a {algo.name} hyperparameter")
            Key.check(algo.keys[name], name, value)
        return params
    flag = f"--from-trial {args.from_trial}: "
    study = load_existing_study(study_name, args.storage, Path(args.log_dir) / study_name, args.heartbeat, flag)
    try:
        trial = study.trials[args.from_trial]
    except IndexError:
        raise UsageError(f"--from-trial {args.from_trial}: no such trial in study {study_name!r}") from None
    if trial.state != optuna.trial.TrialState.COMPLETE:
        raise UsageError(f"--from-trial {args.from_trial}: that trial is {trial.state.name.lower()}, not complete")
    return SearchSpace.as_hyperparams(trial.params, study.user_attrs.get("space", {}))


if __name__ == "__main__":
    sys.exit(run_cli(main))
