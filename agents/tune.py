"""Hyperparameter search and seed sweeps on Optuna, in worker processes and across machines.

    python -m agents.tune --env UAVGrid-v0 --trainer custom --trials 40 --workers 2 --timesteps 300000
    python -m agents.tune --env UAVGrid-v0 --trainer dqn --trials 200 \\
        --storage postgresql://user:pass@db-host/ballenvs --study-name uav-dqn       # on every machine
    python -m agents.tune --report --storage ... --study-name uav-dqn                # table, plots, best section
    python -m agents.tune --seeds 3 --from-trial 12 --storage ... --study-name uav-dqn

Every trial is an ordinary run of an algorithm's trainer (``--trainer``: a registered
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

import contextlib
import io
import multiprocessing
import os
import signal
import socket
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.common.algorithms import ALGORITHMS, Algorithm, algorithm
from agents.common.cli import MAX_SEED, Parser, add_device_flags, run_cli
from agents.common.config import Key, load_section, load_sections, parse_overrides, shipped_config
from agents.common.envs import check_env_id
from agents.common.errors import ConfigError, UsageError
from agents.common.evaluation import listening
from agents.common.runs import EVALUATIONS, atomic_path, process_alive
from agents.common.stops import STOP_SIGNALS, Stopped, how_stopped, ignore_stops, signal_of
from agents.common.studies import check_study_name, load_existing_study, open_storage
from agents.common.threads import parse_threads, usable_cores

PRUNERS = ("median", "halving", "none")
DEFAULT_LOG_DIR = "runs/tune"
#: Seconds between a PostgreSQL worker's heartbeats; a trial silent for two of them is failed.
HEARTBEAT_S = 30


# -- search spaces ----------------------------------------------------------------------------------


class SearchSpace:
    """The hyperparameters to sample and how (see ``zoo_configs/search.yml``), checked against the
    algorithm's keys before any trial: every choice and bound must be a valid value."""

    def __init__(self, space: dict[str, Any], algo: Algorithm, source: str) -> None:
        if not isinstance(space, dict) or not space:
            raise ConfigError(f"search space {source}: a mapping of hyperparameters to samplers, got {space!r}")
        self.space, self.algo = space, algo
        for name, spec in space.items():
            if name not in algo.keys:
                raise ConfigError(
                    f"search space {source}: {name!r} is not a {algo.name} hyperparameter; valid: {', '.join(algo.keys)}"
                )
            key = algo.keys[name]
            kind = spec.get("type") if isinstance(spec, dict) else None
            if kind == "categorical" and isinstance(spec.get("choices"), list) and spec["choices"]:
                for choice in spec["choices"]:
                    key.check(name, choice)
            elif kind in ("float", "int") and _bounds(spec) and spec["low"] <= spec["high"]:
                if not isinstance(spec.get("log", False), bool):
                    raise ConfigError(f"search space {source}: {name}: log must be true or false, got {spec['log']!r}")
                for bound in (spec["low"], spec["high"]):
                    key.check(name, self._scheduled(spec, bound))
                if spec.get("log") and spec["low"] <= 0:
                    raise ConfigError(
                        f"search space {source}: {name} samples on a log scale from {spec['low']!r}; it must start above 0"
                    )
            else:
                raise ConfigError(
                    f"search space {source}: {name}: {spec!r} is not {{type: float|int, low, high[, log]}} "
                    "nor {type: categorical, choices: [...]}"
                )

    @staticmethod
    def _scheduled(spec: dict[str, Any], value: Any) -> Any:
        return f"lin_{value:.6g}" if spec.get("schedule") == "linear" else value

    def sample(self, trial: Any) -> dict[str, Any]:
        params = {}
        for name, spec in self.space.items():
            if spec["type"] == "categorical":
                params[name] = trial.suggest_categorical(name, spec["choices"])
            elif spec["type"] == "int":
                params[name] = trial.suggest_int(name, spec["low"], spec["high"], log=bool(spec.get("log")))
            else:
                params[name] = self._scheduled(
                    spec, trial.suggest_float(name, spec["low"], spec["high"], log=bool(spec.get("log")))
                )
        return params

    @staticmethod
    def as_hyperparams(params: dict[str, Any], space: dict[str, Any]) -> dict[str, Any]:
        """A finished trial's params (as Optuna stores them) as the hyperparameters the trial ran with."""
        return {
            name: SearchSpace._scheduled(space.get(name, {}), value) if space.get(name, {}).get("type") == "float" else value
            for name, value in params.items()
        }


def _bounds(spec: dict[str, Any]) -> bool:
    """A sampler's low and high are there and are numbers."""
    numbers = [spec.get(key) for key in ("low", "high")]
    return all(isinstance(n, (int, float)) and not isinstance(n, bool) and np.isfinite(n) for n in numbers)


def load_space(algo: Algorithm, path: str | None) -> tuple[dict[str, Any], str]:
    if path is None:
        return load_sections(shipped_config("search.yml"))[algo.name], f"zoo_configs/search.yml ({algo.name})"
    return load_sections(path), path


# -- storage and studies ----------------------------------------------------------------------------


def make_pruner(name: str, timesteps: int) -> Any:
    import optuna

    if name == "none":
        return optuna.pruners.NopPruner()
    if name == "halving":
        return optuna.pruners.SuccessiveHalvingPruner()
    # As the RL Zoo's: no pruning in the first trials nor in each trial's first third.
    return optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=timesteps // 3)


def fail_orphaned_trials(study: Any) -> None:
    """Fail this machine's running trials whose worker process is gone. Only for journal files:
    they have no heartbeat, while a database's heartbeat fails such trials on any machine."""
    import optuna

    if isinstance(study._storage, optuna.storages.RDBStorage):
        return
    host = socket.gethostname()
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        worker = str(trial.user_attrs.get("worker", ""))
        worker_host, _, pid = worker.rpartition(":")
        if worker_host == host and pid.isdigit() and not process_alive(int(pid)):
            study._storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.FAIL)


# -- trials ---------------------------------------------------------------------------------------


def trial_threads(requested: str, workers: int) -> str:
    """Each trial's ``--threads``: the user's count, else this machine's share per worker (the
    workers start together, so each measuring the cores free would see the others' start-up)."""
    if parse_threads(requested) is not None or os.environ.get("OMP_NUM_THREADS"):
        return requested
    return str(max(1, usable_cores() // workers))


def trial_argv(plan: dict[str, Any], params: dict[str, Any], seed: int, trial_dir: Path) -> list[str]:
    algo = ALGORITHMS[plan["algo"]]
    argv = ["--env", plan["env"], "--timesteps", str(plan["timesteps"]), "--eval-freq", str(plan["eval_freq"])]
    argv += ["--eval-episodes", str(plan["eval_episodes"]), "--save-freq", "0", "--no-progress", "--seed", str(seed)]
    argv += ["--log-dir", str(trial_dir), "--device", plan["device"], "--threads", plan["threads"]]
    argv += [*algo.trainer_flags, *plan["extra"]]
    return argv + ["--hyperparams", *plan["hyperparams"], *(f"{k}={v}" for k, v in params.items())]


def last_evaluation(run_dir: Path) -> float:
    with np.load(run_dir / EVALUATIONS, allow_pickle=False) as data:
        return float(data["results"][-1].mean())


def run_trial(trial: Any, plan: dict[str, Any], params: dict[str, Any], seed: int, prune: bool) -> float:
    """One trial: the trainer on its budget, each evaluation reported (and the trial pruned if
    the pruner says so); its output goes to the trial's folder, one line to the console."""
    import importlib

    import optuna

    trial.set_user_attr("worker", f"{socket.gethostname()}:{os.getpid()}")
    trial.set_user_attr("seed", seed)
    trial_dir = Path(plan["study_dir"]) / f"trial_{trial.number}"
    trial_dir.mkdir(parents=True, exist_ok=True)
    trainer = importlib.import_module(ALGORITHMS[plan["algo"]].trainer)

    def report(steps: int, mean: float) -> None:
        trial.report(mean, steps)
        if prune and trial.should_prune():
            raise optuna.TrialPruned(f"pruned at {steps} steps ({mean:.3f})")

    output = io.StringIO()
    try:
        with listening(report), contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            code = run_cli(trainer.main, trial_argv(plan, params, seed, trial_dir))
    finally:
        (trial_dir / "output.log").write_text(output.getvalue())
    if code > 128:  # Ctrl-C or a stop signal: the trainer saved its model (if it had begun); this worker stops too
        trial.set_user_attr("model_saved", any(trial_dir.glob("*/*/interrupted_model.*")))
        raise Stopped(code - 128) if code - 128 in STOP_SIGNALS else KeyboardInterrupt()
    if code != 0:
        raise RuntimeError(f"trial {trial.number}: the trainer exited {code}: {output.getvalue().strip().splitlines()[-1:]}")
    run_dir = next(trial_dir.glob("*/*_1"))
    trial.set_user_attr("run_dir", str(run_dir))
    return last_evaluation(run_dir)


def worker(plan: dict[str, Any], n_trials: int, index: int) -> int | None:
    """One worker: its share of the trials, on the shared study. Ctrl-C or a stop signal stops the
    trial running (its trainer saves its model in the trial's folder; Optuna records the trial as
    pruned, stopped early) and the worker: it returns the signal, else None."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = open_storage(plan["storage"], Path(plan["study_dir"]), plan["heartbeat"])
    seed = None if plan["seed"] is None else plan["seed"] + index
    study = optuna.load_study(study_name=plan["study"], storage=storage, sampler=optuna.samplers.TPESampler(seed=seed))
    study.pruner = make_pruner(plan["pruner"], plan["timesteps"])
    space = plan["space"]
    algo = ALGORITHMS[plan["algo"]]

    stopped_by: list[int] = []

    def objective(trial: Any) -> float:
        try:
            if plan["fixed"] is not None:  # a seed sweep: trial n runs seed n of one configuration
                return run_trial(trial, plan, plan["fixed"], trial.number, prune=False)
            return run_trial(trial, plan, SearchSpace(space, algo, "").sample(trial), 0, prune=True)
        except KeyboardInterrupt as stop:
            ignore_stops()
            stopped_by.append(signal_of(stop))
            trial.set_user_attr("stopped_by", signal.Signals(stopped_by[0]).name)
            study.stop()
            raise optuna.TrialPruned(how_stopped(stopped_by[0])) from None

    def tell(study: Any, trial: Any) -> None:
        value = "" if trial.value is None else f" {trial.value:.3f}"
        state = trial.state.name.lower()
        if "stopped_by" in trial.user_attrs:
            saved = trial.user_attrs.get("model_saved", False)
            state = "stopped (its model saved in its folder)" if saved else "stopped before its first step (nothing to save)"
        print(f"[worker {index}] trial {trial.number}: {state}{value}", flush=True)

    callbacks: list[Any] = [tell]
    if plan["max_total_trials"]:
        states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
        callbacks.append(optuna.study.MaxTrialsCallback(plan["max_total_trials"], states=states))
    try:
        study.optimize(objective, n_trials=n_trials, callbacks=callbacks, catch=(Exception,))
    except KeyboardInterrupt as stop:  # between trials
        ignore_stops()
        stopped_by.append(signal_of(stop))
    return stopped_by[0] if stopped_by else None


def worker_process(plan: dict[str, Any], n_trials: int, index: int) -> None:
    """A worker in its own process: its exit status says which signal stopped it (128 + signal)."""
    stopped_by = worker(plan, n_trials, index)
    if stopped_by is not None:
        sys.exit(128 + stopped_by)


def run_workers(plan: dict[str, Any], trials: int) -> None:
    workers = plan["workers"]
    shares = [trials // workers + (1 if k < trials % workers else 0) for k in range(workers)]
    if workers == 1:
        stopped_by = worker(plan, shares[0], 0)
        if stopped_by is not None:
            raise Stopped(stopped_by) if stopped_by in STOP_SIGNALS else KeyboardInterrupt()
        return
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=worker_process, args=(plan, share, k)) for k, share in enumerate(shares) if share]
    for process in processes:
        process.start()
    try:
        for process in processes:
            process.join()
    except KeyboardInterrupt as stop:
        # Ctrl-C reaches the workers too (one process group); a signal sent to this process alone is
        # passed on. Either way each saves its trial's model and stops; wait for them.
        ignore_stops()
        for process in processes:
            if process.is_alive():
                os.kill(process.pid, signal_of(stop))
        for process in processes:
            process.join()
        raise
    stops = [process.exitcode - 128 for process in processes if process.exitcode and process.exitcode > 128]
    if stops:
        raise Stopped(stops[0]) if stops[0] in STOP_SIGNALS else KeyboardInterrupt()
    if any(process.exitcode != 0 for process in processes):
        import optuna

        study = optuna.load_study(
            study_name=plan["study"], storage=open_storage(plan["storage"], Path(plan["study_dir"]), plan["heartbeat"])
        )
        fail_orphaned_trials(study)
        print(f"note: {sum(p.exitcode != 0 for p in processes)} worker(s) stopped early; their running trials were failed")


# -- the report -----------------------------------------------------------------------------------


def write_report(study: Any, folder: Path, plan_attrs: dict[str, Any]) -> str:
    import optuna

    folder.mkdir(parents=True, exist_ok=True)
    finished = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not finished:
        raise UsageError(f"study {study.study_name!r} has no finished trial yet")
    counts = {state.name.lower(): sum(t.state == state for t in study.trials) for state in optuna.trial.TrialState}
    best = sorted(finished, key=lambda t: t.value, reverse=True)
    lines = [
        f"# Study {study.study_name}",
        "",
        f"{plan_attrs.get('env')} with {plan_attrs.get('trainer')}, {plan_attrs.get('timesteps')} steps a trial; "
        + ", ".join(f"{n} {state}" for state, n in counts.items() if n),
        "",
        "| trial | value (last evaluation's mean return) | " + " | ".join(best[0].params) + " |",
        "|---:|---:|" + "---|" * len(best[0].params),
    ]
    for t in best[:10]:
        lines.append(f"| {t.number} | {t.value:.3f} | " + " | ".join(_short(t.params.get(k)) for k in best[0].params) + " |")
    importances = {}
    if len(finished) >= 2:
        with contextlib.suppress(Exception):  # needs two finished trials that differ
            importances = optuna.importance.get_param_importances(study)
    if importances:
        lines += ["", "Parameter importances (fANOVA):", ""] + [
            f"- {name}: {value:.2f}" for name, value in importances.items()
        ]
    section = best_section(best[0], plan_attrs)
    lines += ["", "The best trial as a zoo_configs section (best.yml):", "", "```yaml", section.rstrip(), "```", ""]
    text = "\n".join(lines)
    with atomic_path(folder / "report.md") as tmp:
        tmp.write_text(text)
    with atomic_path(folder / "best.yml") as tmp:
        tmp.write_text(section)
    plots(study, folder, bool(importances))
    return text


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def best_section(trial: Any, plan_attrs: dict[str, Any]) -> str:
    """The env's config section with the trial's hyperparameters in place, ready to paste."""
    algo = ALGORITHMS[plan_attrs["algo"]]
    config = plan_attrs.get("config") or algo.config_path()
    section = load_section(config, plan_attrs["env"])
    section.update(SearchSpace.as_hyperparams(trial.params, plan_attrs.get("space", {})))
    header = f"# agents.tune study {plan_attrs.get('study')}, trial {trial.number}: {trial.value:.3f}\n"
    return header + yaml.safe_dump({plan_attrs["env"]: section}, sort_keys=False)


def plots(study: Any, folder: Path, with_importances: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import optuna
    import optuna.visualization.matplotlib as views

    charts = [("history.png", views.plot_optimization_history), ("parallel.png", views.plot_parallel_coordinate)]
    if with_importances:
        charts.append(("importances.png", views.plot_param_importances))
    for name, draw in charts:
        with contextlib.suppress(Exception), warnings.catch_warnings():  # a chart optuna cannot draw is left out
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)  # the matplotlib views' tag
            axes = draw(study)
            figure = axes.figure if hasattr(axes, "figure") else plt.gcf()
            figure.set_size_inches(10, 6)
            figure.tight_layout()
            with atomic_path(folder / name) as tmp:
                figure.savefig(tmp, format="png", dpi=100)
            plt.close(figure)


# -- the command line -----------------------------------------------------------------------------


def parse(argv: list[str] | None) -> Any:
    parser = Parser(prog="python -m agents.tune", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("--env", default="UAVGrid-v0", help="environment id")
    parser.add_argument(
        "--trainer",
        default="custom",
        help=f"the algorithm whose trainer runs the trials: any of {', '.join(ALGORITHMS)} (the registry's names)",
    )
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
    parser.add_argument("--study-name", default=None, help="default: <env>-<trainer>")
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
    args = parser.parse_args(argv)
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
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        raise UsageError(f"--seed must be in 0..{MAX_SEED}, got {args.seed}")
    if args.from_trial is not None and args.from_trial < 0:
        raise UsageError(f"--from-trial must be a trial number >= 0, got {args.from_trial}")
    if (args.from_trial is not None or args.params) and args.seeds is None:
        raise UsageError("--from-trial and --params go with --seeds")
    if args.seeds is not None and (args.from_trial is None) == (args.params is None):
        raise UsageError("--seeds needs one of --from-trial N or --params FILE")
    return args


def main(argv: list[str] | None = None) -> Path:
    import optuna

    args = parse(argv)
    check_env_id(args.env)
    algo = algorithm(args.trainer)
    study_name = check_study_name(f"{args.env}-{args.trainer}" if args.study_name is None else args.study_name)
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
    extra = [*(["--config", args.config] if args.config else []), *(["--n-envs", str(args.n_envs)] if args.n_envs else [])]
    extra += ["--env-kwargs", *args.env_kwargs]
    fixed = None
    if args.seeds is not None:
        fixed = _fixed_params(args, study_name, algo)
        study_name = f"{study_name}-seeds-{args.from_trial if args.from_trial is not None else Path(args.params).stem}"
        study_dir = Path(args.log_dir) / study_name
    plan = {
        "env": args.env,
        "trainer": args.trainer,
        "algo": algo.name,
        "timesteps": args.timesteps,
        "eval_freq": args.eval_freq or max(args.timesteps // 10, 1),
        "eval_episodes": args.eval_episodes,
        "device": args.device,
        "threads": trial_threads(args.threads, args.workers),
        "extra": extra,
        "hyperparams": list(args.hyperparams),
        "storage": args.storage,
        "study": study_name,
        "study_dir": str(study_dir),
        "workers": args.workers,
        "heartbeat": args.heartbeat,
        "pruner": "none" if fixed is not None else args.pruner,
        "max_total_trials": args.max_total_trials,
        "seed": args.seed,
        "space": space,
        "fixed": fixed,
        "config": args.config,
    }
    _check_trial_command(plan)
    storage = open_storage(args.storage, study_dir, args.heartbeat)
    study = optuna.create_study(study_name=study_name, storage=storage, direction="maximize", load_if_exists=True)
    _same_study(study, plan)
    fail_orphaned_trials(study)
    trials = args.seeds if fixed is not None else args.trials
    print(f"study {study_name}: {len(study.trials)} trials so far; {trials} more, on {args.workers} worker(s) -> {study_dir}")
    start = time.perf_counter()
    try:
        run_workers(plan, trials)
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


def _check_trial_command(plan: dict[str, Any]) -> None:
    """The trainer checks a trial's command line (the search space's first values) before any trial runs."""
    import importlib

    first = {
        name: spec["choices"][0] if spec["type"] == "categorical" else spec["low"] for name, spec in plan["space"].items()
    }
    params = (
        plan["fixed"]
        if plan["fixed"] is not None
        else {k: SearchSpace._scheduled(plan["space"][k], v) for k, v in first.items()}
    )
    trainer = importlib.import_module(ALGORITHMS[plan["algo"]].trainer)
    setup = trainer.prepare(trial_argv(plan, params, 0, Path(plan["study_dir"])), make_folder=False)[1]
    learning_starts = setup.section.algo_kwargs.get("learning_starts", 0)
    if "learning_starts" not in plan["space"] and learning_starts >= plan["timesteps"]:
        raise UsageError(
            f"--timesteps {plan['timesteps']} ends before learning starts (learning_starts {learning_starts}): "
            "the trials would rank untrained networks; give more steps or a smaller learning_starts"
        )


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
