"""Multi-step returns, shared by every learner that sums them (the custom agents' replay buffer,
the n-step buffer stable-baselines3's DQN gets on Dict observations)."""

from __future__ import annotations

import numpy as np


def n_step_returns(
    rewards: np.ndarray, ended: np.ndarray, stored_after: np.ndarray, gamma: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n-step returns from (batch, n) rewards and episode-end flags of the n steps that follow
    each sampled one (itself first), of which only ``stored_after`` + 1 are stored yet.

    Sums up to the first episode end (terminated or truncated) or the newest stored step.
    Returns the index (0..n-1) of the last step summed, the discounted sums and gamma ** steps.
    """
    n = rewards.shape[1]
    first_end = np.where(ended.any(1), ended.argmax(1), n - 1)
    last = np.minimum(first_end, stored_after)
    steps = np.arange(n)
    summed = (rewards * (gamma**steps).astype(np.float32) * (steps <= last[:, None])).sum(1, dtype=np.float32)
    return last, summed, (gamma ** (last + 1.0)).astype(np.float32)
