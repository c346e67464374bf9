"""Q-networks chosen from the observation space, described by a plain spec so a weights-only
checkpoint can rebuild them.

- images (uint8, channel-first): the Nature DQN CNN, sized to the input;
- flat vectors: an MLP;
- dicts: each part encoded (images by the CNN, MultiDiscrete/Discrete one-hot, boxes
  flattened), concatenated, then an MLP: the two-input design of our UAV user's agent.

Defaults follow stable-baselines3's DQN policies so that the same ``policy_kwargs`` mean the
same network: ``net_arch`` is the hidden layers after the features (none for CnnPolicy,
[64, 64] otherwise).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

CNN_FEATURES = 512
#: SB3's default net_arch per policy.
DEFAULT_NET_ARCH = {"CnnPolicy": [], "MlpPolicy": [64, 64], "MultiInputPolicy": [64, 64]}
POLICIES = tuple(DEFAULT_NET_ARCH)


def _is_image(space: spaces.Space) -> bool:
    return isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3


def part_spec(space: spaces.Space, name: str) -> dict[str, Any]:
    if _is_image(space):
        return {"kind": "image", "shape": list(space.shape)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"kind": "multi_discrete", "nvec": [int(n) for n in space.nvec.ravel()]}
    if isinstance(space, spaces.Discrete):
        return {"kind": "multi_discrete", "nvec": [int(space.n)]}
    if isinstance(space, spaces.Box):
        return {"kind": "box", "size": int(np.prod(space.shape))}
    raise ValueError(f"observation part {name!r}: unsupported space {space}")


def network_spec(
    observation_space: spaces.Space, n_actions: int, policy: str, policy_kwargs: dict[str, Any]
) -> dict[str, Any]:
    """A JSON-like description of the Q-network for this space, checked against ``policy``."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; valid: {', '.join(POLICIES)}")
    unknown = sorted(set(policy_kwargs) - {"net_arch"})
    if unknown:
        raise ValueError(f"policy_kwargs key(s) {', '.join(unknown)} not supported by agents.custom_train; valid: net_arch")
    if isinstance(observation_space, spaces.Dict):
        parts = {key: part_spec(sub, key) for key, sub in observation_space.spaces.items()}
        expected = "MultiInputPolicy"
    else:
        parts = {"": part_spec(observation_space, "observation")}
        expected = "CnnPolicy" if parts[""]["kind"] == "image" else "MlpPolicy"
    if policy != expected:
        raise ValueError(f"policy {policy!r} does not fit the observation space {observation_space}; use {expected!r}")
    net_arch = policy_kwargs.get("net_arch", DEFAULT_NET_ARCH[policy])
    return {"parts": parts, "net_arch": [int(n) for n in net_arch], "n_actions": int(n_actions)}


class NatureCNN(nn.Module):
    """Mnih et al. (2015): three convolutions and a 512-unit layer; uint8 in, scaled here."""

    def __init__(self, shape: list[int]) -> None:
        super().__init__()
        channels = shape[0]
        self.convs = nn.Sequential(
            nn.Conv2d(channels, 32, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            flat = self.convs(torch.zeros(1, *shape)).shape[1]
        self.linear = nn.Sequential(nn.Linear(flat, CNN_FEATURES), nn.ReLU())

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.linear(self.convs(frames.float() / 255.0))


class OneHot(nn.Module):
    """MultiDiscrete values (batch, k) to concatenated one-hot vectors."""

    def __init__(self, nvec: list[int]) -> None:
        super().__init__()
        self.register_buffer(
            "offsets", torch.tensor(np.concatenate([[0], np.cumsum(nvec)[:-1]]), dtype=torch.long), persistent=False
        )
        self.size = int(sum(nvec))

    def forward(self, values: torch.Tensor) -> torch.Tensor:
        hot = torch.zeros(values.shape[0], self.size, device=values.device)
        return hot.scatter_(1, values.long().reshape(values.shape[0], -1) + self.offsets, 1.0)


def _encoder(spec: dict[str, Any]) -> tuple[nn.Module, int]:
    if spec["kind"] == "image":
        return NatureCNN(spec["shape"]), CNN_FEATURES
    if spec["kind"] == "multi_discrete":
        encoder = OneHot(spec["nvec"])
        return encoder, encoder.size
    return nn.Flatten(), spec["size"]


class QNetwork(nn.Module):
    """Q-values (batch, n_actions) of an observation: a tensor, or a dict of tensors."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        self.spec = spec
        encoders, width = {}, 0
        for key, part in spec["parts"].items():
            encoders[key or "observation"], size = _encoder(part)
            width += size
        self.encoders = nn.ModuleDict(encoders)
        layers: list[nn.Module] = []
        for hidden in spec["net_arch"]:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, spec["n_actions"]))
        self.head = nn.Sequential(*layers)
        self._single = list(spec["parts"]) == [""]

    def forward(self, observation: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
        if self._single:
            return self.head(self.encoders["observation"](observation))
        features = [self.encoders[key](observation[key]) for key in self.spec["parts"]]
        return self.head(torch.cat(features, dim=1))
