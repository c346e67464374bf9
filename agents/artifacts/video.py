"""Videos of played episodes: an .mp4 (ffmpeg, from imageio-ffmpeg) or a .gif, written atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.artifacts.runs import atomic_path, check_output_file
from agents.common.errors import UsageError

VIDEO_SUFFIXES = (".mp4", ".gif")


def check_video_path(path: str | Path) -> Path:
    """A video file to write: .mp4 or .gif, new or a regular file to replace, in a folder that
    takes a new file (:func:`agents.artifacts.runs.check_output_file`)."""
    return check_output_file(path, "--video", VIDEO_SUFFIXES)


def write_video(path: str | Path, frames: Sequence[np.ndarray], fps: int, every: int = 1) -> Path:
    """``frames`` (each (h, w, 3) uint8) as a video at ``fps``, every ``every``-th frame (a smaller gif)."""
    import imageio.v2 as imageio

    path = Path(path)
    kept = [np.asarray(frame) for frame in frames[::every] if frame is not None]
    if not kept:
        raise UsageError(f"--video {str(path)!r}: no frames were drawn")
    pictures: list[Any] = kept  # imageio's stubs take a list of array-likes
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".gif":
            imageio.mimsave(tmp, pictures, format="GIF", duration=1000 * every / fps, loop=0)
        else:
            imageio.mimsave(tmp, pictures, format="FFMPEG", fps=max(1, fps // every), macro_block_size=8)
    return path
