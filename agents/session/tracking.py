"""Weights & Biases, with ``--track`` (a run that does not ask for it runs none of this), and the
frames per second a run's videos are drawn at.

``--track`` (the RL Zoo's flag) starts a W&B run named after the run folder, in ``--wandb-project``
(and ``--wandb-entity``), with the resolved config.yml as its config; it mirrors the TensorBoard
metrics (``sync_tensorboard``) and, at the end, a video of the final model playing one episode
(also kept as ``final_model.mp4`` in the run folder). ``WANDB_MODE=offline`` keeps it all on
disk (``wandb sync`` uploads it later). wandb is the optional ``wandb`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.artifacts.runs import read_config
from agents.common.errors import UsageError

VIDEO_NAME = "final_model.mp4"


#: W&B's run modes (``WANDB_MODE``), as its settings take them.
WANDB_MODES = ("online", "offline", "shared", "disabled", "dryrun", "run")
#: The modes that keep a run on this machine: no API key needed.
LOCAL_MODES = ("offline", "disabled", "dryrun")


def check_tracking(args: argparse.Namespace) -> None:
    """--track needs wandb installed, a ``WANDB_MODE`` it takes and a project name it takes:
    said before any run folder exists (wandb itself says so only once the run has started)."""
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
    if mode not in LOCAL_MODES:
        with contextlib.redirect_stderr(io.StringIO()):  # its note on where it found the key: ours is the one line
            logged_in = wandb.login(prompt=False, verify=False)
        if not logged_in:
            raise UsageError(
                "--track: no W&B API key configured; set WANDB_API_KEY or run `wandb login`, or WANDB_MODE=offline to "
                "keep the run on disk (`wandb sync` uploads it later)"
            )


def record_final_model(run_dir: Path, episodes: int = 1) -> Path:
    """A video of a finished run's final model playing ``episodes`` episodes: ``final_model.mp4``."""
    from agents.artifacts.models import FINAL_MODEL, model_file
    from agents.artifacts.video import write_video
    from agents.common.configuration.registry import MODEL_SUFFIXES, algorithm
    from agents.session.evaluation import evaluate

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


class Tracker:
    """A W&B run around a training run (made for ``--track`` only)."""

    def __init__(self, args: argparse.Namespace, run_dir: Path) -> None:
        import wandb

        self.run_dir = run_dir
        # Before the trainer's TensorBoard writer exists: wandb mirrors what it writes.
        self.run: Any = wandb.init(
            project=args.wandb_project,
            entity=args.wandb_entity,
            name=f"{run_dir.parent.name}/{run_dir.name}",
            dir=str(run_dir),
            config=read_config(run_dir),
            sync_tensorboard=True,
            reinit="finish_previous",
        )

    def around(self, train: Callable[..., Path], *args: Any) -> Path:
        """Run ``train(*args)`` (which returns the finished run's folder); then record the final
        model's video and close the W&B run, which is closed on any way out."""
        try:
            run_dir = train(*args)
        except BaseException:
            self.finish()
            raise
        self.finish(record_final_model(run_dir))
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
