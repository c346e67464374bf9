"""The one trainer: ``python -m agents.train`` (:mod:`agents.train`) and its old names with their
algorithms preset (:mod:`agents.sb3_train`, :mod:`agents.custom_train`), each a :class:`Command`.

The run, in order: parse and check everything (:func:`prepare`, the learner's own checks
included) -> make the run folder -> start the learner (envs, model) -> learn, feeding the
milestones (checkpoints, evaluations, self-play pool, console) -> save the final model
(:func:`agents.common.session.training.run_training`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from stable_baselines3.common.logger import Logger, configure

from agents.common.artifacts.models import resumed_run
from agents.common.configuration.registry import ALGORITHMS, TRAIN, check_algo, trained_by
from agents.common.errors import UsageError
from agents.common.session.cli import describe_device, trainer_parser
from agents.common.session.console import Console
from agents.common.session.evaluation import Evaluator
from agents.common.session.milestones import Milestones, best_model_saver
from agents.common.session.setup import EVAL_SEED_OFFSET, RunSetup, make_eval_envs, make_run_folder, prepare_run
from agents.common.session.tracking import Tracker, log_hyperparameters
from agents.common.session.training import Learner, QLearnerExtras, run_training, starting

#: The flags that go to an algorithm's Learner, each taken by those whose ``learner_flags`` name it.
LEARNER_FLAGS = ("amp", "compile", "address")


@dataclass(frozen=True)
class Command:
    """A command line that trains: ``agents.train`` itself, or an alias with its algorithms preset."""

    module: str  # python -m <module>
    description: str
    default_algo: str
    gpu_flags: bool = True  # --amp and --compile (our own agents' options)

    @property
    def algos(self) -> tuple[str, ...]:
        return trained_by(self.module)


TRAIN_COMMAND = Command(
    TRAIN,
    "Train any registered algorithm on a ballenvs environment: stable-baselines3's DQN (--algo dqn), "
    "our DQN (--algo custom), PQN (--algo pqn).",
    default_algo="dqn",
)


def prepare(
    argv: list[str] | None, make_folder: bool = True, command: Command = TRAIN_COMMAND
) -> tuple[argparse.Namespace, RunSetup, Learner]:
    """Parse and check a command line (and make the run folder): what :func:`main` does before
    training, and what agents.compare and agents.tune check their runs with."""
    algos = command.algos
    parser = trainer_parser(f"python -m {command.module}", command.description, algos)
    parser.set_defaults(algo=None)  # the resumed run's, else the command's default
    if command.gpu_flags:
        parser.add_argument("--amp", action="store_true", help="bf16 autocast on CUDA, our agents (not applied on CPU)")
        parser.add_argument(
            "--compile", action="store_true", help="torch.compile the Q-networks on CUDA, our agents (not applied on CPU)"
        )
    args = parser.parse_args(argv)
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


def main(argv: list[str] | None = None, command: Command = TRAIN_COMMAND) -> Path:
    args, setup, learner = prepare(argv, command=command)
    section, run_dir = setup.section, setup.run_dir
    print(f"device: {describe_device(setup.device)}")
    for flag in ("amp", "compile"):
        if getattr(args, flag, False) and setup.device != "cuda":
            print(f"--{flag}: not applied on CPU (it only pays off on a GPU)")
    print(f"{section.env_id}: {section.policy}, {section.n_envs} envs ({setup.vec_env}), {setup.timesteps} steps -> {run_dir}")
    with starting(setup):  # Ctrl-C before the first step leaves no run folder behind
        tracker = Tracker(args, run_dir)  # before TensorBoard's writer: W&B mirrors it
        logger = configure(str(run_dir), ["csv", "tensorboard"])
        to_close = [*learner.start(setup, logger), logger]
        log_hyperparameters(logger, run_dir)
        milestones = make_milestones(setup, args, learner, logger)
    return tracker.around(run_training, setup, learner, milestones, to_close)


def make_milestones(setup: RunSetup, args: argparse.Namespace, learner: Learner, logger: Logger) -> Milestones:
    """The run's milestones from its flags: the console, checkpoints every --save-freq steps and
    --eval-episodes games every --eval-freq steps, logged to ``logger``."""
    learning_starts = learner.learning_starts if isinstance(learner, QLearnerExtras) else 0
    console = Console(setup.timesteps, learner.num_timesteps, learning_starts, enabled=not args.no_progress)
    eval_freq = args.eval_freq
    if eval_freq == setup.timesteps:  # once, at the run's end (prepare_run's note): a resumed run's end is further on
        eval_freq = learner.num_timesteps + setup.timesteps
    evaluator = None
    if args.eval_freq:
        evaluator = Evaluator(
            make_eval_envs(setup, args.eval_episodes),
            args.eval_episodes,
            setup.seed + EVAL_SEED_OFFSET,
            setup.run_dir,
            logger,
            console,
            save_best=best_model_saver(learner, setup.run_dir, setup.algo.suffix),
        )
    return Milestones(learner, setup.run_dir, console, logger, setup.algo.suffix, args.save_freq, evaluator, eval_freq)
