"""Multi-step returns, computed once for every learner that sums them: the custom agents' replay
buffers (in host arrays, and resident on a GPU) and the n-step buffer stable-baselines3's DQN gets
on Dict observations."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def n_step_returns(rewards: Any, ended: Any, stored_after: Any, gamma: float) -> tuple[Any, Any, Any]:
    """n-step returns from (batch, n) rewards and episode-end flags of the n steps that follow
    each sampled one (itself first), of which only ``stored_after`` + 1 are stored yet.

    Sums up to the first episode end (terminated or truncated) or the newest stored step.
    Returns the index (0..n-1) of the last step summed, the discounted sums (float32) and
    gamma ** steps (float32): numpy arrays for numpy arrays (computed on views of them, no copy),
    tensors on their device for tensors.
    """
    if isinstance(rewards, np.ndarray):
        last, summed, discounts = n_step_returns(
            torch.from_numpy(rewards), torch.from_numpy(np.asarray(ended)), torch.from_numpy(np.asarray(stored_after)), gamma
        )
        return last.numpy(), summed.numpy(), discounts.numpy()
    n = rewards.shape[1]
    first_end = torch.where(ended.any(1), ended.int().argmax(1), n - 1)
    last = torch.minimum(first_end, stored_after)
    steps = torch.arange(n, device=rewards.device)
    gamma_64 = torch.tensor(gamma, dtype=torch.float64, device=rewards.device)  # powers in float64, as numpy's
    summed = (rewards * (gamma_64**steps).float() * (steps <= last[:, None])).sum(1, dtype=torch.float32)
    return last, summed, (gamma_64 ** (last + 1.0)).float()
