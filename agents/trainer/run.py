"""The one trainer: ``python -m agents.train`` (:mod:`agents.train`) and its old names with their
algorithms preset (:mod:`agents.sb3_train`, :mod:`agents.custom_train`), each a :class:`Command`.

The run, in order: parse and check everything (:func:`prepare`, the learner's own checks
included) -> make the run folder -> start the learner (envs, model) -> learn, feeding the
milestones (checkpoints, evaluations, self-play pool, console) -> save the final model
(:func:`agents.trainer.training.run_training`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stable_baselines3.common.logger import HParam, Logger, configure

from agents.artifacts.models import resumed_run
from agents.artifacts.runs import FINAL_EVALUATION, FINAL_MODEL, read_config, write_yaml
from agents.common.configuration.registry import ALGORITHMS, check_algo
from agents.common.errors import UsageError, note
from agents.environments.envs import make_eval_vec
from agents.session.cli import FINAL_GAMES, describe_device
from agents.session.console import Console
from agents.session.evaluation import EvalResult, Evaluator, evaluate
from agents.session.milestones import Milestones, best_model_saver
from agents.session.tracking import Tracker
from agents.trainer.command import TRAIN_COMMAND, Command, command_parser
from agents.trainer.setup import EVAL_SEED_OFFSET, RunSetup, make_eval_envs, make_run_folder, prepare_run
from agents.trainer.stages import run_stages, staged_section
from agents.trainer.training import Learner, QLearnerExtras, run_training, starting
from ballenvs.reference import reference_for

#: The flags that go to an algorithm's Learner, each taken by those whose ``learner_flags`` name it.
LEARNER_FLAGS = ("amp", "compile", "address")


def prepare(
    argv: list[str] | None, make_folder: bool = True, command: Command = TRAIN_COMMAND
) -> tuple[argparse.Namespace, RunSetup, Learner]:
    """Parse and check a command line (and make the run folder): what :func:`main` does before
    training, and what agents.compare and agents.tune check their runs with."""
    algos = command.algos
    args = command_parser(command).parse_args(argv)
    resumed = resumed_run(args.resume) if args.resume else None
    if args.algo is None:  # the resumed run's (another command's run is refused by check_algo)
        args.algo = resumed.algo if resumed is not None and resumed.algo in algos else command.default_algo
    algo = check_algo(args.algo, command.module)
    if args.teacher is not None and "teacher" not in algo.keys:
        taught = [name for name in command.algos if "teacher" in ALGORITHMS[name].keys]
        raise UsageError(f"--teacher: {algo.label} learns from no teacher; algorithms that do: {', '.join(taught) or 'none'}")
    if not algo.replay_buffer and args.save_replay_buffer:
        raise UsageError(f"--save-replay-buffer: {algo.label} keeps no replay buffer")
    options = {flag: getattr(args, flag) for flag in LEARNER_FLAGS if getattr(args, flag, None) not in (None, False)}
    refused = sorted(options.keys() - set(algo.learner_flags))
    if refused:
        takers = [name for name in command.algos if refused[0] in ALGORITHMS[name].learner_flags]
        raise UsageError(f"--{refused[0]}: an option of --algo {', '.join(takers)}, not of {algo.label}")
    learner = algo.make_learner(**options)
    setup = prepare_run(args, algo, learner, resumed)
    return args, make_run_folder(setup, args.log_dir) if make_folder else setup, learner


def main(
    argv: list[str] | None = None,
    command: Command = TRAIN_COMMAND,
    on_evaluation: Callable[[int, float], None] | None = None,
) -> Path:
    """Train as ``argv`` says; ``on_evaluation(steps, mean_return)`` after each evaluation. A config
    section that lists stages trains each in turn (:mod:`agents.trainer.stages`)."""
    parsed = command_parser(command).parse_args(argv)
    stages = staged_section(parsed)
    if stages is not None:
        return run_stages(parsed, stages, lambda stage_argv: main(stage_argv, command))
    args, setup, learner = prepare(argv, command=command)
    section, run_dir = setup.section, setup.run_dir
    with starting(setup):  # Ctrl-C before the first step leaves no run folder behind
        tracker = Tracker(args, run_dir) if args.track else None  # before TensorBoard's writer: W&B mirrors it
        logger = configure(str(run_dir), ["csv", "tensorboard"])
        to_close = [*learner.start(setup, logger), logger]
        log_hyperparameters(logger, run_dir)
        milestones = make_milestones(setup, args, learner, logger, on_evaluation)
    # Once nothing can refuse the run: a refused one prints its one line on stderr and nothing else.
    note(f"device: {describe_device(setup.device, setup.threads)}")
    for flag in ("amp", "compile"):
        if getattr(args, flag, False) and setup.device != "cuda":
            note(f"--{flag}: not applied on CPU (it only pays off on a GPU)")
    note(f"{section.env_id}: {section.policy}, {section.n_envs} envs ({setup.vec_env}), {setup.timesteps} steps -> {run_dir}")
    for line in setup.notes:
        note(line)
    if tracker is None:
        run_training(setup, learner, milestones, to_close)
    else:
        tracker.around(run_training, setup, learner, milestones, to_close)
    games = final_games(args, setup)
    if games:
        judge_final_model(setup, games)
    return run_dir


def final_games(args: argparse.Namespace, setup: RunSetup) -> int:
    """--final-games, else FINAL_GAMES for a whole run of its section from nothing that plays its
    env's own opponent (a self-play run's evaluations play the built-ins), else none."""
    if args.final_games is not None:
        return int(args.final_games)
    whole = args.timesteps is None and args.resume is None
    return FINAL_GAMES if whole and setup.self_play is None else 0


def judge_final_model(setup: RunSetup, episodes: int) -> EvalResult:
    """The saved final model's games against the run's own env, greedy, on evaluation seeds, as
    ``python -m agents.evaluate RUN --episodes N --deterministic`` plays them; printed and kept in
    ``final_evaluation.yml``."""
    config = read_config(setup.run_dir)
    model_path = setup.run_dir / f"{FINAL_MODEL}{setup.algo.suffix}"
    model = setup.algo.load(model_path, config, setup.device)
    result = evaluate(model, config, episodes, setup.seed + EVAL_SEED_OFFSET)
    line = result.summary(setup.section.env_id)
    print(f"final model, {line}")
    judged = {"model": model_path.name, "episodes": episodes, "mean_return": float(result.returns.mean())}
    if result.outcomes:
        judged["win_rate"] = result.outcomes["left"] / episodes
    write_yaml(setup.run_dir / FINAL_EVALUATION, judged)
    return result


def log_hyperparameters(logger: Logger, run_dir: Path) -> None:
    """The run's settings in TensorBoard's hyperparameter tab (with the evaluation return as its
    metric), as flat scalars: its hparams take no nested values."""
    hyperparameters: dict[str, Any] = {}
    for key, value in read_config(run_dir).items():
        if key == "hyperparams":
            for name, setting in value.items():
                hyperparameters[name] = setting if isinstance(setting, (int, float, str, bool)) else str(setting)
        elif isinstance(value, (int, float, str, bool)):
            hyperparameters[key] = value
    logger.record("hparams", HParam(hyperparameters, {"eval/mean_reward": 0.0}), exclude=("stdout", "log", "json", "csv"))
    logger.dump(0)


def make_milestones(
    setup: RunSetup,
    args: argparse.Namespace,
    learner: Learner,
    logger: Logger,
    on_evaluation: Callable[[int, float], None] | None = None,
) -> Milestones:
    """The run's milestones from its flags: the console, checkpoints every --save-freq steps and
    evaluations (``setup``'s, from the flags or the config), logged to ``logger``."""
    learning_starts = learner.learning_starts if isinstance(learner, QLearnerExtras) else 0
    console = Console(setup.timesteps, learner.num_timesteps, learning_starts, enabled=not args.no_progress)
    eval_freq = setup.eval_freq
    if eval_freq == setup.timesteps:  # once, at the run's end (prepare_run's note): a resumed run's end is further on
        eval_freq = learner.num_timesteps + setup.timesteps
    evaluator = None
    if setup.eval_freq:
        evaluator = Evaluator(
            eval_envs(setup, setup.eval_episodes),
            setup.eval_episodes,
            setup.seed + EVAL_SEED_OFFSET,
            setup.run_dir,
            logger,
            console,
            save_best=best_model_saver(learner, setup.run_dir, setup.algo.suffix),
            on_evaluation=on_evaluation,
            held_out=reference_for(setup.section.env_id).held_out_players if setup.self_play is not None else (),
        )
    return Milestones(learner, setup.run_dir, console, logger, setup.algo.suffix, args.save_freq, evaluator, eval_freq)


def eval_envs(setup: RunSetup, episodes: int) -> dict[str, Any]:
    """The envs a run's evaluations play: its own or the built-ins', and a self-play run's
    ``evaluated`` players."""
    envs = make_eval_envs(setup, episodes)
    if setup.self_play is not None and setup.self_play.evaluated_players:
        from agents.twoplayer.selfplay import evaluated_opponents  # only self-play loads the two-player machinery

        s = setup.section
        opponents = evaluated_opponents(setup.self_play, s.env_id, s.env_kwargs, s.frame_stack, setup.device)
        for name, opponent in opponents.items():
            if name not in envs:  # a built-in named again is played once, on the env already made
                envs[name] = make_eval_vec(s.env_id, {**s.env_kwargs, "opponent": opponent}, s.frame_stack, episodes)
    return envs
