"""Saving a batch of games in progress and going on from it exactly: what ``get_state`` and
``set_state`` of the vector envs, the games and the players share.

A state is a dict of numpy arrays, Python numbers, ``None``, and generator states (numpy's
``bit_generator.state`` dicts), nested in dicts and lists: plain data that any format which
keeps arrays and ints can hold. ``set_state`` goes on an object made with the same arguments;
it takes a value only where it has the kind, shape and dtype the object holds now, and
otherwise raises a ValueError naming the value and what fits (a state from a file is data,
never trusted to fit).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A step counter saved in a state is below this (a float holds every int below it exactly).
MAX_STEPS = 2**53 - 1


def copied(value: Any) -> Any:
    """An array copied (the game replaces or writes into its own later), anything else as it is."""
    return value.copy() if isinstance(value, np.ndarray) else value


def fitting(current: Any, saved: Any, name: str) -> Any:
    """``saved`` where it can stand for ``current``: an array of the same shape and dtype (copied),
    or a number of the same kind (an int for an int, a float for a float, a bool for a bool);
    floats finite."""
    if isinstance(current, np.ndarray):
        if isinstance(saved, np.ndarray) and saved.shape == current.shape and saved.dtype == current.dtype:
            if saved.dtype.kind == "f" and not np.isfinite(saved).all():  # a game goes on from numbers, never NaN
                raise ValueError(f"state {name}: holds NaN or infinite values")
            return saved.copy()
        got = f"{saved.dtype} {saved.shape}" if isinstance(saved, np.ndarray) else repr(saved)[:80]
        raise ValueError(f"state {name}: expected a {current.dtype} array of shape {current.shape}, got {got}")
    for kind in (bool, int, float):
        if isinstance(current, kind):
            if type(saved) is kind or (kind is float and type(saved) is int):
                if kind is float and not np.isfinite(saved):
                    raise ValueError(f"state {name}: expected a finite number, got {saved!r}")
                return kind(saved)
            raise ValueError(f"state {name}: expected a {kind.__name__}, got {saved!r:.80}")
    raise ValueError(f"state {name}: cannot hold {type(current).__name__}")


def within(values: Any, low: int, high: int, name: str) -> Any:
    """``values`` (a number or an array, as :func:`fitting` took it) when all lie in [low, high]:
    a counter or an index from a file may fit in shape and still point past what it counts."""
    array = np.asarray(values)
    if array.size and (array.min() < low or array.max() > high):
        raise ValueError(f"state {name}: expected values in [{low}, {high}], got {array.min()}..{array.max()}")
    return values


def fitting_or_none(current: Any, saved: Any, name: str) -> Any:
    """As :func:`fitting`, for a value that is None until first made (an array then of any shape
    the dtype of ``current`` when that exists): None stays None, an array is taken copied."""
    if saved is None:
        return None
    if isinstance(saved, np.ndarray) and (current is None or saved.dtype == current.dtype):
        return saved.copy()
    raise ValueError(f"state {name}: expected None or an array, got {saved!r:.80}")


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    return dict(rng.bit_generator.state)


def set_generator_state(rng: np.random.Generator, saved: Any, name: str) -> None:
    """Continue ``rng`` from a state :func:`generator_state` gave (of the same kind of bit generator)."""
    try:
        rng.bit_generator.state = saved
    except (TypeError, ValueError, KeyError, OverflowError) as error:
        raise ValueError(f"state {name}: not a state of a {type(rng.bit_generator).__name__} generator ({error})") from None


def parts(saved: Any, keys: tuple[str, ...], name: str) -> dict[str, Any]:
    """``saved`` as a dict holding ``keys``, or a ValueError naming what is missing."""
    if not isinstance(saved, dict):
        raise ValueError(f"state {name}: expected a dict with {', '.join(keys)}, got {type(saved).__name__}")
    missing = [key for key in keys if key not in saved]
    if missing:
        raise ValueError(f"state {name}: lacks {', '.join(missing)}")
    return saved
