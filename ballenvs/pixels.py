"""Pixel observations as float32 in [0, 1] (the option ``pixel_dtype="float32"``, checked by
:func:`ballenvs._checks.check_pixel_dtype`), for libraries whose CNNs take float frames (Ray
RLlib's encoders among them); the envs draw uint8 frames and our trainers learn from those."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

_SCALE = np.float32(1.0 / 255.0)


class FloatPixels:
    """An observer whose uint8 frames come out as float32 in [0, 1], the same picture / 255."""

    def __init__(self, observe: Callable[..., np.ndarray], space: spaces.Box) -> None:
        self._observe = observe
        self.space = spaces.Box(0.0, 1.0, space.shape, np.float32)

    def observe(self, *args: Any) -> np.ndarray:
        frames = self._observe(*args)
        return np.multiply(frames, _SCALE, dtype=np.float32)
