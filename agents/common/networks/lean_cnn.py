"""A lean CNN for small frames, one class for both trainers: stable-baselines3 takes it as
``policy_kwargs: "dict(features_extractor_class=LeanCNN)"``, and our agents build the same
network from the same key (:mod:`agents.algorithms.networks`), so one config section means one
network to both.

Why: the Nature CNN on 4 stacked 36x36 frames costs about 0.9M multiply-adds a sample, 13x the
state section's MLP ([256, 256], about 70k), so a pixel learner that samples as many transitions
per env step as the state learner would take 13x its time. This one cuts the frame into 4x4
patches (a convolution of stride 4: a ball of a pixel or two still moves within a patch's view,
and the stacked frames of a patch sit in one filter), then one 3x3 convolution of stride 2 and a
dense layer: about 0.22M multiply-adds a sample on 4x36x36 with 128 features (3.2x the MLP).
"""

from __future__ import annotations

import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

#: Its default width of features.
LEAN_FEATURES = 128


class LeanCNN(BaseFeaturesExtractor):
    """Patches of 4x4 to 16 channels, a 3x3 convolution of stride 2 to 32, a dense layer to
    ``features_dim``, ReLUs between. Takes images scaled to [0, 1], channel-first, as
    stable-baselines3 hands its extractors (our Q-networks scale their uint8 frames first)."""

    def __init__(self, observation_space: spaces.Box, features_dim: int = LEAN_FEATURES) -> None:
        super().__init__(observation_space, features_dim)
        channels = observation_space.shape[0]
        self.cnn = nn.Sequential(
            nn.Conv2d(channels, 16, kernel_size=4, stride=4),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, stride=2),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            width = self.cnn(torch.zeros(1, *observation_space.shape)).shape[1]
        self.linear = nn.Sequential(nn.Linear(width, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.linear(self.cnn(observations))


def multiply_adds(network: nn.Module, example: torch.Tensor | dict[str, torch.Tensor]) -> int:
    """Multiply-adds of one forward pass of ``network`` per sample of ``example``: its convolutions'
    and dense layers' (what dominates its cost; activations and norms are not counted)."""
    total = 0

    def count(module: nn.Module, _: tuple, output: torch.Tensor) -> None:
        nonlocal total
        if isinstance(module, nn.Conv2d):
            per_output = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
            total += output.numel() * per_output
        elif isinstance(module, nn.Linear):
            total += output.numel() * module.in_features

    hooks = [m.register_forward_hook(count) for m in network.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    try:
        with torch.no_grad():
            network(example)
    finally:
        for hook in hooks:
            hook.remove()
    batch = next(iter(example.values())) if isinstance(example, dict) else example
    return total // batch.shape[0]
