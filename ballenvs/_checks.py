"""Argument checks shared by the environments: each error names the bad value and what is valid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    """An int (not a bool) >= ``minimum`` (and <= ``maximum``: sizes that would not fit in memory)."""
    wrong = isinstance(value, bool) or not isinstance(value, (int, np.integer))
    if wrong or value < minimum or (maximum is not None and value > maximum):
        valid = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an int {valid}, got {value!r}")
    return int(value)


#: The largest observation image side: a frame of 1024 x 1024 already costs 1 MiB per env and step.
MAX_OBS_SIZE = 1024


def check_float(name: str, value: Any, *, positive: bool = False) -> float:
    valid = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not valid or not np.isfinite(value) or (positive and value <= 0):
        raise ValueError(f"{name} must be a finite {'positive ' if positive else ''}number, got {value!r}")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    """True or False (also numpy's bools and the ints 0 and 1); a string such as 'false' is refused, not truthy."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def check_choice(name: str, value: Any, valid: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, valid))}")
    return value


#: What picture observations may come as: the frames drawn, or divided by 255 (ballenvs.pixels).
PIXEL_DTYPES = ("uint8", "float32")


def check_pixel_dtype(pixel_dtype: Any, has_pixels: bool) -> str:
    """``pixel_dtype`` checked: one of :data:`PIXEL_DTYPES`, and "float32" only for a picture."""
    pixel_dtype = check_choice("pixel_dtype", pixel_dtype, PIXEL_DTYPES)
    if pixel_dtype != "uint8" and not has_pixels:
        raise ValueError(f"pixel_dtype={pixel_dtype!r} applies to picture observations only; this one has no pixels")
    return pixel_dtype


def check_action(action: Any, n_actions: int) -> int:
    """A discrete action as a Python int; anything else (floats, arrays, out of range) fails."""
    is_int = isinstance(action, (int, np.integer)) and not isinstance(action, bool)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action, is_int = action.item(), True
    if not is_int or not 0 <= action < n_actions:
        raise ValueError(f"invalid action {action!r}; valid: an int in 0..{n_actions - 1}")
    return int(action)


def check_options(env_name: str, options: dict[str, Any], valid: Sequence[str]) -> None:
    """Unknown keyword options are an error naming them and the valid ones."""
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"unknown {env_name} option(s) {', '.join(map(repr, unknown))}; valid: {', '.join(valid)}")
