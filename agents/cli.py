"""The command line every trainer shares: the same flags, the same meanings, the same errors."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from agents.config import DEFAULT_CONFIG
from agents.envs import VEC_ENVS

DEVICES = ("auto", "cpu", "cuda")


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def trainer_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="Hyperparameters come from the env's section of --config; --hyperparams overrides them. "
        "Output goes to <log-dir>/<algo>/<env>_<n>/: config.yml, checkpoints/, best_model, final_model, "
        "monitor/ CSVs, progress.csv and TensorBoard events (tensorboard --logdir runs).",
    )
    parser.add_argument("--env", default="BallDuel-v0", help="environment id (BallDuel-v0, UAVGrid-v0, UAVGridImage-v0)")
    parser.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help="env steps to train (default: the config's n_timesteps; with --resume: further steps)",
    )
    parser.add_argument("--n-envs", type=int, default=None, help="parallel environments (default: the config's n_envs)")
    parser.add_argument(
        "--vec-env",
        choices=VEC_ENVS,
        default=None,
        help="subproc: a worker process per env; dummy: envs in process, one after the other; native: the env's "
        "batched vector env, all in one call (fastest for these cheap envs); default: subproc when n-envs > 1",
    )
    parser.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when available, else CPU")
    parser.add_argument("--seed", type=int, default=0, help="seeds the envs (seed, seed+1, ...) and the learner")
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="hyperparameter file in the RL Zoo format")
    parser.add_argument(
        "--hyperparams",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="override config values, e.g. learning_rate=1.0e-4 batch_size=64",
    )
    parser.add_argument(
        "--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE", help="env options, e.g. opponent=pusher obs_type=state"
    )
    parser.add_argument("--log-dir", default="runs", help="where run folders go")
    parser.add_argument("--save-freq", type=int, default=50_000, help="checkpoint every this many env steps (0: never)")
    parser.add_argument(
        "--eval-freq", type=int, default=25_000, help="evaluate every this many env steps on a separate env (0: never)"
    )
    parser.add_argument("--eval-episodes", type=int, default=10, help="episodes per evaluation")
    parser.add_argument(
        "--resume", default=None, metavar="PATH", help="continue from a saved model (or a run folder), keeping its step count"
    )
    parser.add_argument(
        "--save-replay-buffer",
        action="store_true",
        help="save the replay buffer with the final model, so --resume can restore it",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def check_counts(args: argparse.Namespace) -> None:
    for flag in ("timesteps", "n_envs", "eval_episodes"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 1, got {value}")
    for flag in ("save_freq", "eval_freq"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 0, got {getattr(args, flag)}")


def resolve_device(requested: str) -> str:
    """The torch device to use: "cuda" or "cpu"; "cuda" without CUDA is an error."""
    import torch

    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise UsageError(f"--device cuda: CUDA is not available here (torch {torch.__version__}); use --device auto or cpu")
    device = "cuda" if requested == "cuda" or (requested == "auto" and available) else "cpu"
    if device == "cuda":
        # Fixed input sizes: let cuDNN pick its fastest kernels once.
        torch.backends.cudnn.benchmark = True
    return device


def describe_device(device: str) -> str:
    import torch

    if device == "cuda":
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return f"cpu ({torch.get_num_threads()} threads, torch {torch.__version__})"


def run_cli(main: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> int:
    """Run ``main``; a bad input (our errors, ValueError, missing file) becomes one line on
    stderr and exit status 2 rather than a traceback. BALLENVS_DEBUG=1 shows the traceback."""
    from agents.config import ConfigError

    try:
        main(argv)
    except (UsageError, ConfigError, ValueError, FileNotFoundError) as error:
        if os.environ.get("BALLENVS_DEBUG"):
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0
