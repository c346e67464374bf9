"""Experiment tracking: the run's hyperparameters in TensorBoard, and Weights & Biases with ``--track``.

``--track`` (the RL Zoo's flag) starts a W&B run named after the run folder, in ``--wandb-project``
(and ``--wandb-entity``), with the resolved config.yml as its config; it mirrors the TensorBoard
metrics (``sync_tensorboard``) and, at the end, a video of the final model playing one episode
(also kept as ``final_model.mp4`` in the run folder). ``WANDB_MODE=offline`` keeps it all on
disk (``wandb sync`` uploads it later). wandb is the optional ``wandb`` extra.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.common.artifacts.runs import read_config
from agents.common.errors import UsageError

VIDEO_NAME = "final_model.mp4"


def add_tracking_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--track", action="store_true", help="log the run to Weights & Biases (pip install 'ballenvs[wandb]')")
    parser.add_argument("--wandb-project", default="ballenvs", help="with --track: the W&B project")
    parser.add_argument("--wandb-entity", default=None, help="with --track: the W&B entity (team or user)")


#: W&B's run modes (``WANDB_MODE``), as its settings take them.
WANDB_MODES = ("online", "offline", "shared", "disabled", "dryrun", "run")


def check_tracking(args: argparse.Namespace) -> None:
    """--track needs wandb installed, a ``WANDB_MODE`` it takes and a project name it takes:
    said before any run folder exists (wandb itself says so only once the run has started)."""
    if not getattr(args, "track", False):
        return
    try:
        import wandb
    except ImportError:
        raise UsageError("--track needs Weights & Biases: pip install 'ballenvs[wandb]'") from None
    mode = os.environ.get("WANDB_MODE")
    if mode is not None and mode not in WANDB_MODES:
        raise UsageError(f"--track: WANDB_MODE={mode!r} is not a W&B mode; valid: {', '.join(WANDB_MODES)}")
    try:
        wandb.Settings(project=args.wandb_project, entity=args.wandb_entity)
    except Exception as error:  # wandb's UsageError or pydantic's ValidationError, by version
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"--track: {first_line}") from None


def hyperparameters(config: dict[str, Any]) -> dict[str, Any]:
    """A run config's settings as flat scalars (TensorBoard's hparams take no nested values)."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if key == "hyperparams":
            for name, setting in value.items():
                flat[name] = setting if isinstance(setting, (int, float, str, bool)) else str(setting)
        elif isinstance(value, (int, float, str, bool)):
            flat[key] = value
    return flat


def record_final_model(run_dir: Path, episodes: int = 1) -> Path:
    """A video of a finished run's final model playing ``episodes`` episodes: ``final_model.mp4``."""
    from agents.common.artifacts.models import FINAL_MODEL, MODEL_SUFFIXES, model_file
    from agents.common.artifacts.video import write_video
    from agents.common.configuration.registry import algorithm
    from agents.common.session.evaluation import evaluate

    config = read_config(run_dir)
    final = model_file(run_dir, FINAL_MODEL, MODEL_SUFFIXES)
    assert final is not None, "called for a finished run, which has its final model"
    model = algorithm(config["algo"]).load(final, config, "cpu")
    frames: list = []
    evaluate(model, config, episodes, seed=0, env_overrides={"render_mode": "rgb_array"}, frames=frames)
    return write_video(run_dir / VIDEO_NAME, frames, render_fps(config["env_id"]))


def render_fps(env_id: str) -> int:
    """The frames per second an env is drawn at for people (its metadata's)."""
    import gymnasium as gym

    return int(gym.make(env_id).metadata.get("render_fps", 30))


def log_hyperparameters(logger: Any, run_dir: Path) -> None:
    """The run's settings in TensorBoard's hyperparameter tab (with the evaluation return as its metric)."""
    from stable_baselines3.common.logger import HParam

    hparams = HParam(hyperparameters(read_config(run_dir)), {"eval/mean_reward": 0.0})
    logger.record("hparams", hparams, exclude=("stdout", "log", "json", "csv"))
    logger.dump(0)


class Tracker:
    """W&B around a run (a no-op without ``--track``)."""

    def __init__(self, args: argparse.Namespace, run_dir: Path) -> None:
        self.run: Any = None
        self.run_dir = run_dir
        if not getattr(args, "track", False):
            return
        import wandb

        # Before the trainer's TensorBoard writer exists: wandb mirrors what it writes.
        self.run = wandb.init(
            project=args.wandb_project,
            entity=args.wandb_entity,
            name=f"{run_dir.parent.name}/{run_dir.name}",
            dir=str(run_dir),
            config=read_config(run_dir),
            sync_tensorboard=True,
            reinit="finish_previous",
        )

    def around(self, train: Callable[..., Path], *args: Any) -> Path:
        """Run ``train(*args)`` (which returns the finished run's folder); then, when tracking, record
        the final model's video and close the W&B run, which is closed on any way out."""
        try:
            run_dir = train(*args)
        except BaseException:
            self.finish()
            raise
        self.finish(record_final_model(run_dir) if self.run is not None else None)
        return run_dir

    def finish(self, video: Path | None = None) -> None:
        if self.run is None:
            return
        import wandb

        if video is not None and video.is_file():
            kind: Any = video.suffix.lstrip(".")  # .mp4 or .gif: check_video_path's
            self.run.log({"video/final_model": wandb.Video(str(video), format=kind)})
        self.run.finish()
        self.run = None
