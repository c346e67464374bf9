"""Which stable-baselines3 policy fits which observation space, checked alike for every trainer."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from agents.common.errors import UsageError

POLICIES = ("CnnPolicy", "MlpPolicy", "MultiInputPolicy")
#: The features stable-baselines3's NatureCNN (and ours, agents.algorithms.networks) gives an image.
CNN_FEATURES = 512
#: SB3's default net_arch per policy: the hidden layers after the features.
DEFAULT_NET_ARCH = {"CnnPolicy": [], "MlpPolicy": [64, 64], "MultiInputPolicy": [64, 64]}
#: The hidden activations our networks build (agents.algorithms.networks): the name a spec and a
#: checkpoint hold -> the torch.nn layer.
ACTIVATIONS = {"relu": "ReLU", "tanh": "Tanh"}


def is_image(space: spaces.Space) -> bool:
    return isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3


def expected_policy(space: spaces.Space) -> str:
    if isinstance(space, spaces.Dict):
        return "MultiInputPolicy"
    return "CnnPolicy" if is_image(space) else "MlpPolicy"


def check_policy(policy: str, space: spaces.Space) -> None:
    """The policy is one of :data:`POLICIES` and the one for this observation space."""
    if policy not in POLICIES:
        raise UsageError(f"unknown policy {policy!r}; valid: {', '.join(POLICIES)}")
    expected = expected_policy(space)
    if policy != expected:
        if policy == "CnnPolicy" and isinstance(space, spaces.Box) and space.dtype == np.float32 and len(space.shape) == 3:
            # Frames scaled to [0, 1] (the envs' pixel_dtype="float32", for RLlib): these trainers learn from the bytes.
            raise UsageError(f"CnnPolicy learns from uint8 frames, not {space}: leave pixel_dtype at 'uint8' here")
        raise UsageError(f"policy {policy!r} does not fit the observation space {space}; use {expected!r}")


def check_net_arch(net_arch: Any) -> list[int]:
    """Hidden layer widths: a list of positive ints."""
    if not isinstance(net_arch, (list, tuple)) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in net_arch
    ):
        raise UsageError(f"policy_kwargs net_arch must be a list of layer widths >= 1, got {net_arch!r}")
    return [int(n) for n in net_arch]
