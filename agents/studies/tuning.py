"""Hyperparameter search on Optuna, as agents.tune runs it: search spaces, pruners, a trial (an ordinary
run of an algorithm's trainer, imported by name when it runs, as gymnasium's entry points are), the
workers that share a study, and its report. See :mod:`agents.tune` for the command line.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import multiprocessing
import os
import signal
import socket
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.artifacts.figures import pyplot, save_png
from agents.artifacts.runs import EVALUATIONS, atomic_path, process_alive
from agents.common.configuration.config_files import load_section, load_sections, shipped_config
from agents.common.configuration.registry import ALGORITHMS, Algorithm
from agents.common.errors import ConfigError, UsageError, note
from agents.common.stops import STOP_SIGNALS, Stopped, how_stopped, ignore_stops, signal_of
from agents.common.threads import parse_threads, usable_cores
from agents.session.cli import run_cli
from agents.session.console import PLAIN_EVERY_S, duration, every
from agents.studies.storage import open_storage

#: The trainer's main as a trial runs it: ``train(argv, on_evaluation=report)``, handed in by
#: agents.tune (the trainer sits in a room above this one).
Train = Callable[..., Path]

PRUNERS = ("median", "halving", "none")
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
                    f"search space {source}: {name}: {spec!r:.200} is not {{type: float|int, low, high[, log]}} "
                    "(finite bounds, low <= high, integers below 2^53) nor {type: categorical, choices: [...]}"
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
    """A sampler's low and high are there and are numbers: finite floats, or ints below 2^53 in
    size (a float's exact integers; Optuna samples ints through floats)."""
    numbers = [spec.get(key) for key in ("low", "high")]
    return all(
        (isinstance(n, float) and math.isfinite(n)) or (isinstance(n, int) and not isinstance(n, bool) and abs(n) < 2**53)
        for n in numbers
    )


def load_space(algo: Algorithm, path: str | None) -> tuple[dict[str, Any], str]:
    if path is None:
        spaces = load_sections(shipped_config("search.yml"))
        if algo.name not in spaces:
            raise UsageError(
                f"--algo {algo.name}: zoo_configs/search.yml has no search space for it (it has {', '.join(spaces)}); "
                "give one with --search-space FILE"
            )
        return spaces[algo.name], f"zoo_configs/search.yml ({algo.name})"
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


def run_trial(
    trial: Any, plan: dict[str, Any], params: dict[str, Any], seed: int, prune: bool, train: Train, worker: int = 0
) -> float:
    """One trial: ``train`` (the trainer's main) on its budget, each evaluation reported (and the
    trial pruned if the pruner says so); its output goes to the trial's folder, to the console a
    line every :data:`PLAIN_EVERY_S` seconds while it runs (with its last evaluation) and one at
    its end."""
    import optuna

    trial.set_user_attr("worker", f"{socket.gethostname()}:{os.getpid()}")
    trial.set_user_attr("seed", seed)
    trial_dir = Path(plan["study_dir"]) / f"trial_{trial.number}"
    trial_dir.mkdir(parents=True, exist_ok=True)
    latest = ["none yet"]  # the trial's last evaluation, for its progress lines
    console, start = sys.stderr, time.monotonic()  # progress, before the trainer's output is redirected

    def report(steps: int, mean: float) -> None:
        latest[0] = f"{mean:.3f} at {steps:,} steps"
        trial.report(mean, steps)
        if prune and trial.should_prune():
            raise optuna.TrialPruned(f"pruned at {steps} steps ({mean:.3f})")

    def show_progress() -> None:
        elapsed = duration(time.monotonic() - start)
        print(f"[worker {worker}] trial {trial.number}: {elapsed} in, last evaluation {latest[0]}", file=console, flush=True)

    output = io.StringIO()
    showing = every(PLAIN_EVERY_S, show_progress) if plan.get("progress", True) else contextlib.nullcontext()
    try:
        with showing, contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            code = run_cli(functools.partial(train, on_evaluation=report), trial_argv(plan, params, seed, trial_dir))
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


def worker(plan: dict[str, Any], n_trials: int, index: int, train: Train) -> int | None:
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
                return run_trial(trial, plan, plan["fixed"], trial.number, prune=False, train=train, worker=index)
            params = SearchSpace(space, algo, "").sample(trial)
            return run_trial(trial, plan, params, 0, prune=True, train=train, worker=index)
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


def worker_process(plan: dict[str, Any], n_trials: int, index: int, train: Train) -> None:
    """A worker in its own process: its exit status says which signal stopped it (128 + signal)."""
    stopped_by = worker(plan, n_trials, index, train)
    if stopped_by is not None:
        sys.exit(128 + stopped_by)


def run_workers(plan: dict[str, Any], trials: int, train: Train) -> None:
    """The study's ``trials`` on its workers, each trial a run of ``train`` (the trainer's main, a
    module-level function: a spawned worker imports it by name)."""
    workers = plan["workers"]
    shares = [trials // workers + (1 if k < trials % workers else 0) for k in range(workers)]
    if workers == 1:
        stopped_by = worker(plan, shares[0], 0, train)
        if stopped_by is not None:
            raise Stopped(stopped_by) if stopped_by in STOP_SIGNALS else KeyboardInterrupt()
        return
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=worker_process, args=(plan, share, k, train)) for k, share in enumerate(shares) if share
    ]
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
            if process.is_alive() and process.pid is not None:
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
        note(f"{sum(p.exitcode != 0 for p in processes)} worker(s) stopped early; their running trials were failed")


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
    for name, figure in tuning_figures(study, plan_attrs["env"], bool(importances)).items():
        save_png(figure, folder / name, dpi=100)
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


def tuning_figures(study: Any, env_id: str, with_importances: bool) -> dict[str, Any]:
    """Optuna's charts of the study (history, parallel coordinates, importances), each titled with
    what it shows, the study and the env, by the file name it is saved under."""
    pyplot()  # the Agg backend, before optuna's views import matplotlib
    import optuna
    import optuna.visualization.matplotlib as views

    charts: list[tuple[str, str, Any]] = [
        ("history.png", "Objective of every trial, and the best so far", views.plot_optimization_history),
        ("parallel.png", "Each trial's hyperparameters and objective", views.plot_parallel_coordinate),
    ]
    if with_importances:
        charts.append(("importances.png", "How much each hyperparameter moved the objective", views.plot_param_importances))
    figures = {}
    for name, title, draw in charts:
        with contextlib.suppress(Exception), warnings.catch_warnings():  # a chart optuna cannot draw is left out
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)  # the matplotlib views' tag
            axes = draw(study)
            figure = axes.figure if hasattr(axes, "figure") else pyplot().gcf()
            figure.set_size_inches(10, 6)
            figure.suptitle(f"{title}: study {study.study_name} on {env_id}")
            figure.tight_layout()
            figures[name] = figure
    return figures
