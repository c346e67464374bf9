"""Train stable-baselines3 DQN on a ballenvs environment.

    python -m agents.sb3_train                                   # BallDuel-v0, zoo_configs defaults
    python -m agents.sb3_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4

CNN policies for image observations, MultiInputPolicy for UAVGrid's dict observation (as the
config says), on the GPU when there is one, with the env's own batched vector env by default.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gymnasium import spaces
from stable_baselines3.common.logger import configure

from agents.common.algorithms import SB3_TRAINER, check_algo, trained_by
from agents.common.cli import describe_device, run_cli, trainer_parser
from agents.common.config import Section
from agents.common.console import Console
from agents.common.evaluation import Evaluator
from agents.common.models import SNAPSHOTS
from agents.common.runs import CHECKPOINTS, FINAL_MODEL, REPLAY_BUFFER, read_config
from agents.common.tracking import Tracker, log_hyperparameters
from agents.common.training import (
    EVAL_SEED_OFFSET,
    RunSetup,
    make_eval_envs,
    make_train_env,
    prepare_run,
    run_training,
    starting,
)
from agents.common.zoo import write_zoo_files
from agents.sb3.callbacks import AtomicCheckpoint, ConsoleProgress, Evaluate, SelfPlayPool
from agents.sb3.dqn import build_dqn, check_values, load_replay_buffer, restore, save_model, save_replay_buffer
from agents.twoplayer.selfplay import SnapshotPool, make_opponent


def check_section(
    section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
) -> None:
    """What stable-baselines3 would find wrong only once training starts (or in a worker)."""
    check_values(section, observation_space)
    if resume is not None:  # the weights fit this run's network, or the file is refused here
        restore(
            build_dqn(section, (observation_space, action_space), None, device, buffer_size=1, learning_starts=0),
            resume,
            device,
        )


def prepare(argv: list[str] | None, make_folder: bool = True) -> tuple[argparse.Namespace, RunSetup]:
    """Parse and check a command line (and make the run folder): what main() does before training."""
    parser = trainer_parser("python -m agents.sb3_train", __doc__.split("\n\n")[0].strip(), trained_by(SB3_TRAINER))
    args = parser.parse_args(argv)
    return args, prepare_run(args, check_algo(args.algo, SB3_TRAINER), check_section, make_folder)


def main(argv: list[str] | None = None) -> Path:
    args, setup = prepare(argv)
    section, run_dir = setup.section, setup.run_dir
    print(f"device: {describe_device(setup.device)}")
    print(f"{section.env_id}: {section.policy}, {section.n_envs} envs ({setup.vec_env}), {setup.timesteps} steps -> {run_dir}")

    with starting(setup):  # Ctrl-C before the first step leaves no run folder behind
        tracker = Tracker(args, run_dir)  # before TensorBoard's writer: W&B mirrors it
        opponent = make_opponent(setup.self_play, section.env_id, section.env_kwargs, section.frame_stack, setup.device)
        train_env = make_train_env(setup, opponent=opponent)
        model = build_dqn(section, train_env, setup.seed, setup.device)
        if setup.resume is not None:
            resume(model, setup.resume, setup.resume_buffer, setup.device)
        model.set_logger(configure(str(run_dir), ["csv", "tensorboard"]))
        log_hyperparameters(model.logger, run_dir)

        console = Console(setup.timesteps, model.num_timesteps, model.learning_starts, enabled=not args.no_progress)
        callbacks: list[Any] = [ConsoleProgress(console)]
        if opponent is not None and setup.self_play is not None:  # self-play made the opponent
            callbacks.append(
                SelfPlayPool(SnapshotPool(setup.self_play, run_dir / SNAPSHOTS, model.q_net, opponent, None, setup.seed))
            )
        if args.save_freq:
            callbacks.append(AtomicCheckpoint(args.save_freq, run_dir / CHECKPOINTS))
        evaluator = None
        if args.eval_freq:
            evaluator = Evaluator(
                make_eval_envs(setup, args.eval_episodes),
                args.eval_episodes,
                setup.seed + EVAL_SEED_OFFSET,
                run_dir,
                model.logger,
                console,
                save_best=lambda: save_model(model, run_dir / "best_model.zip"),
            )
            callbacks.append(Evaluate(evaluator, args.eval_freq))

    def save(name: str) -> Path:
        """Replay buffer first, then the model: a model beside no buffer means none was asked for."""
        if setup.save_replay_buffer:
            save_replay_buffer(model, run_dir / REPLAY_BUFFER)
        save_model(model, run_dir / f"{name}.zip")
        if name == FINAL_MODEL:  # and the RL Zoo's copy of it, with its config and arguments
            write_zoo_files(run_dir, read_config(run_dir), None, final_model=run_dir / f"{name}.zip")
        return run_dir / f"{name}.zip"

    return tracker.around(
        lambda: run_training(
            setup,
            # A resumed run continues its schedules over all its steps, as custom_train does.
            lambda: model.learn(setup.timesteps, callback=callbacks, reset_num_timesteps=setup.resume is None),
            save,
            lambda: model.num_timesteps,
            console,
            [train_env, *([evaluator] if evaluator else []), model.logger],
        )
    )


def resume(model: Any, path: Path, buffer: Path | None, device: str) -> None:
    """The model's weights, optimiser and counters from ``path``, and the replay buffer it saved, if any."""
    restore(model, path, device)
    message = f"resumed from {path} at step {model.num_timesteps}"
    if buffer is not None:
        message += f" with its replay buffer ({load_replay_buffer(model, buffer)} transitions)"
    print(message)


if __name__ == "__main__":
    sys.exit(run_cli(main))
