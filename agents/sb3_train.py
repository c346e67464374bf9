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
from agents.common.config import Section, parse_kwargs
from agents.common.console import Console
from agents.common.errors import UsageError
from agents.common.evaluation import Evaluator
from agents.common.policies import check_net_arch, check_policy
from agents.common.runs import CHECKPOINTS, FINAL_MODEL, REPLAY_BUFFER, read_config
from agents.common.snapshots import SNAPSHOTS
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
from agents.sb3.dqn import build_dqn, load_replay_buffer, restore, save_model, save_replay_buffer
from agents.twoplayer.selfplay import SnapshotPool, make_opponent

#: The policy_kwargs stable-baselines3's DQN policies take.
POLICY_KWARGS = ("net_arch", "activation_fn", "features_extractor_class", "features_extractor_kwargs", "normalize_images")
POLICY_KWARGS += ("optimizer_class", "optimizer_kwargs")


def check_section(
    section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
) -> None:
    """What stable-baselines3 would find wrong only once training starts (or in a worker)."""
    check_policy(section.policy, observation_space)
    for key in ("policy_kwargs", "replay_buffer_kwargs"):
        parse_kwargs(key, section.algo_kwargs.get(key))
    policy_kwargs = parse_kwargs("policy_kwargs", section.algo_kwargs.get("policy_kwargs"))
    unknown = sorted(set(policy_kwargs) - set(POLICY_KWARGS))
    if unknown:
        raise UsageError(
            f"policy_kwargs key(s) {', '.join(unknown)} not taken by DQN policies; valid: {', '.join(POLICY_KWARGS)}"
        )
    if "net_arch" in policy_kwargs:
        check_net_arch(policy_kwargs["net_arch"])
    if not isinstance(policy_kwargs.get("normalize_images", True), bool):
        raise UsageError(f"policy_kwargs normalize_images must be True or False, got {policy_kwargs['normalize_images']!r}")
    if not isinstance(policy_kwargs.get("optimizer_kwargs", {}), dict):
        raise UsageError(f"policy_kwargs optimizer_kwargs must be a dict, got {policy_kwargs['optimizer_kwargs']!r}")
    check_roles(
        section.policy, policy_kwargs, parse_kwargs("replay_buffer_kwargs", section.algo_kwargs.get("replay_buffer_kwargs"))
    )
    if resume is not None:  # the weights fit this run's network, or the file is refused here
        restore(
            build_dqn(section, (observation_space, action_space), None, device, buffer_size=1, learning_starts=0),
            resume,
            device,
        )


def check_roles(policy: str, policy_kwargs: dict[str, Any], replay_buffer_kwargs: dict[str, Any]) -> None:
    """Each class in the kwargs is one of its role (an activation, an optimiser, a features
    extractor), and each kwargs dict holds only what its class takes."""
    import inspect

    import torch
    from stable_baselines3.common.buffers import ReplayBuffer
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, CombinedExtractor, FlattenExtractor, NatureCNN

    roles = {
        "activation_fn": (torch.nn.Module, "an activation such as nn.ReLU"),
        "optimizer_class": (torch.optim.Optimizer, "an optimiser such as th.optim.Adam"),
        "features_extractor_class": (BaseFeaturesExtractor, "a stable-baselines3 features extractor"),
    }
    for key, (base, role) in roles.items():
        value = policy_kwargs.get(key)
        if value is not None and not (inspect.isclass(value) and issubclass(value, base)):
            raise UsageError(f"policy_kwargs {key}={getattr(value, '__name__', value)!r} is not {role}")
    activation = policy_kwargs.get("activation_fn")
    if activation is not None and issubclass(activation, (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)):
        raise UsageError(f"policy_kwargs activation_fn={activation.__name__!r} is not an activation such as nn.ReLU")
    optimizer = policy_kwargs.get("optimizer_class", torch.optim.Adam)
    defaults = {"CnnPolicy": NatureCNN, "MlpPolicy": FlattenExtractor, "MultiInputPolicy": CombinedExtractor}
    extractor = policy_kwargs.get("features_extractor_class", defaults[policy])
    # The optimiser gets the parameters and the learning rate from SB3, an extractor the space.
    targets = {"optimizer_kwargs": (optimizer, 2), "features_extractor_kwargs": (extractor, 1)}
    for key, (target, skip) in targets.items():
        given = policy_kwargs.get(key) or {}
        if not isinstance(given, dict):
            raise UsageError(f"policy_kwargs {key} must be a dict, got {given!r}")
        if given and target is not None:
            _check_arguments(f"policy_kwargs {key}", given, target, skip)
    if replay_buffer_kwargs:
        _check_arguments("replay_buffer_kwargs", replay_buffer_kwargs, ReplayBuffer, 5)


def _check_arguments(what: str, given: dict[str, Any], target: Any, skip: int) -> None:
    """``given`` holds only keyword arguments ``target`` takes, past its first ``skip`` (which we pass)."""
    import inspect

    parameters = list(inspect.signature(target).parameters)[skip:]
    unknown = sorted(set(given) - set(parameters))
    if unknown:
        raise UsageError(f"{what}: {', '.join(unknown)} not taken by {target.__name__}; it takes {', '.join(parameters)}")


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
            restore(model, setup.resume, setup.device)
            message = f"resumed from {setup.resume} at step {model.num_timesteps}"
            if setup.resume_buffer is not None:
                message += f" with its replay buffer ({load_replay_buffer(model, setup.resume_buffer)} transitions)"
            print(message)
        model.set_logger(configure(str(run_dir), ["csv", "tensorboard"]))
        log_hyperparameters(model.logger, run_dir)

        console = Console(setup.timesteps, model.num_timesteps, model.learning_starts, enabled=not args.no_progress)
        callbacks: list[Any] = [ConsoleProgress(console)]
        if opponent is not None:
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


if __name__ == "__main__":
    sys.exit(run_cli(main))
