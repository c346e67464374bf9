"""Random shifts of sampled frames (DrQ: Kostrikov, Yarats and Fergus, 2020; Yarats et al., 2021),
for both DQN trainers' minibatches.

Each sampled image is moved by up to ``pad`` pixels in each direction, its edge pixels repeated
into the gap (DrQ's replicate padding and random crop, in one gather); a sample's observation and
next observation move by the same shift, so the TD target is computed on the view the Q-value
is. Only the minibatch is shifted: what the replay buffer stores is never touched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.common.errors import UsageError
from agents.common.networks.policies import is_image


def check_augmentation(shift: int, observation_space: Any) -> None:
    """Frames are shifted only where there are frames: an image observation."""
    if shift and not is_image(observation_space):
        raise UsageError(f"augment_shift={shift} shifts image observations; this env's are {observation_space}: use 0")


def draw_shifts(rng: np.random.Generator | None, batch_size: int, pad: int) -> np.ndarray:
    """(batch_size, 2) row and column shifts in [-pad, pad], from ``rng`` (None: numpy's global
    generator, which stable-baselines3 seeds and samples its own minibatches from)."""
    if rng is None:
        return np.random.randint(-pad, pad + 1, size=(batch_size, 2))
    return rng.integers(-pad, pad + 1, size=(batch_size, 2))


def shift_images(images: torch.Tensor, shifts: np.ndarray | torch.Tensor) -> torch.Tensor:
    """``images`` (B, C, H, W), any dtype, each moved by its (row, column) shift with its edges
    repeated; a new tensor, on the same device and of the same dtype."""
    batch, _, height, width = images.shape
    shifts = torch.as_tensor(shifts, device=images.device, dtype=torch.long)
    rows = (torch.arange(height, device=images.device)[None, :] - shifts[:, :1]).clamp_(0, height - 1)
    cols = (torch.arange(width, device=images.device)[None, :] - shifts[:, 1:]).clamp_(0, width - 1)
    samples = torch.arange(batch, device=images.device)[:, None, None, None]
    channels = torch.arange(images.shape[1], device=images.device)[None, :, None, None]
    return images[samples, channels, rows[:, None, :, None], cols[:, None, None, :]]
