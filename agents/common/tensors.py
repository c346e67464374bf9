"""The shapes of what a loop moves between numpy and torch: rows of a batch, tensors on a device,
a space's parts and their torch dtypes (what the replay buffers allocate)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces


def rows_of(observation: Any, rows: Any) -> Any:
    """Some rows of a batch of observations: an array, or a dict of arrays (or tensors)."""
    return {key: value[rows] for key, value in observation.items()} if isinstance(observation, dict) else observation[rows]


def to_tensor(observation: Any, device: torch.device) -> Any:
    if isinstance(observation, dict):
        return {key: torch.as_tensor(value, device=device) for key, value in observation.items()}
    return torch.as_tensor(observation, device=device)


def observation_parts(space: spaces.Space) -> dict[str, spaces.Space]:
    """A space's parts by key: a Dict space's own, else the whole space under ``""``."""
    return dict(space.spaces) if isinstance(space, spaces.Dict) else {"": space}


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype."""
    return torch.from_numpy(np.zeros(0, dtype=dtype)).dtype
