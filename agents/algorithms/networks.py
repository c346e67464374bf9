"""Q-networks chosen from the observation space, described by a plain spec so a weights-only
checkpoint can rebuild them.

- images (uint8, channel-first): the Nature DQN CNN, sized to the input, or with
  ``features_extractor_class=LeanCNN`` the lean one (:mod:`agents.common.networks.lean_cnn`);
- flat vectors: an MLP;
- dicts: each part encoded (images by the CNN, MultiDiscrete/Discrete one-hot, boxes
  flattened), concatenated, then an MLP: the two-input design of our UAV user's agent.

Defaults follow stable-baselines3's DQN policies so that the same ``policy_kwargs`` mean the
same network: ``net_arch`` is the hidden layers after the features (none for CnnPolicy,
[64, 64] otherwise). An algorithm's config and its network's spec come from a section together
(:func:`settings_of`).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import QConfig
from agents.common.errors import UsageError
from agents.common.networks.lean_cnn import LEAN_FEATURES, LeanCNN
from agents.common.networks.policies import ACTIVATIONS, CNN_FEATURES, DEFAULT_NET_ARCH, check_net_arch, check_policy, is_image

#: The policy_kwargs the custom networks take.
POLICY_KWARGS = ("net_arch", "activation_fn", "layer_norm", "features_extractor_class", "features_extractor_kwargs")
#: The hidden layers' activations, by the name a spec holds (a spec without one: relu, as every
#: spec written before the choice existed; the names a file may hold: ACTIVATIONS).
ACTIVATION_LAYERS: dict[str, type[nn.Module]] = {name: getattr(nn, layer) for name, layer in ACTIVATIONS.items()}
#: The image extractors they build, by the class stable-baselines3 would take for the same network.
EXTRACTORS = {"NatureCNN": "nature", "LeanCNN": "lean"}


def part_spec(space: spaces.Space, name: str, extractor: dict[str, Any] | None = None) -> dict[str, Any]:
    if is_image(space):
        return {"kind": "image", "shape": list(space.shape or ()), **(extractor or {})}
    if isinstance(space, spaces.MultiDiscrete):
        return {"kind": "multi_discrete", "nvec": [int(n) for n in space.nvec.ravel()]}
    if isinstance(space, spaces.Discrete):
        return {"kind": "multi_discrete", "nvec": [int(space.n)]}
    if isinstance(space, spaces.Box):
        return {"kind": "box", "size": int(np.prod(space.shape))}
    raise UsageError(f"observation part {name!r}: unsupported space {space}")


def network_spec(
    observation_space: spaces.Space, n_actions: int, policy: str, policy_kwargs: dict[str, Any]
) -> dict[str, Any]:
    """A JSON-like description of the Q-network for this space, checked against ``policy``.
    ``policy_kwargs``: ``net_arch`` (hidden widths after the features), ``activation_fn`` (the
    hidden layers': nn.ReLU, the default, or nn.Tanh) and ``layer_norm`` (LayerNorm after every
    hidden layer and convolution, as PQN's networks; off by default)."""
    check_policy(policy, observation_space)
    unknown = sorted(set(policy_kwargs) - set(POLICY_KWARGS))
    if unknown:
        raise UsageError(
            f"policy_kwargs key(s) {', '.join(unknown)} not supported by the custom agents; valid: {', '.join(POLICY_KWARGS)}"
        )
    layer_norm = policy_kwargs.get("layer_norm", False)
    if not isinstance(layer_norm, bool):
        raise UsageError(f"policy_kwargs layer_norm must be True or False, got {layer_norm!r}")
    extractor = image_extractor(policy_kwargs, layer_norm)
    if isinstance(observation_space, spaces.Dict):
        parts = {key: part_spec(sub, key, extractor) for key, sub in observation_space.spaces.items()}
    else:
        parts = {"": part_spec(observation_space, "observation", extractor)}
    # SB3's rule: a CnnPolicy's head is empty after its NatureCNN only; after another extractor, [64, 64].
    default_net_arch = DEFAULT_NET_ARCH["MlpPolicy"] if extractor else DEFAULT_NET_ARCH[policy]
    net_arch = check_net_arch(policy_kwargs.get("net_arch", default_net_arch))
    spec = {"parts": parts, "net_arch": net_arch, "n_actions": int(n_actions), "layer_norm": layer_norm}
    activation = activation_name(policy_kwargs.get("activation_fn", nn.ReLU))
    return spec if activation == "relu" else {**spec, "activation": activation}  # relu specs as they always were


def activation_name(activation: Any) -> str:
    """The spec's name of a hidden activation given as the zoo writes it (nn.ReLU, nn.Tanh) or by name."""
    names = {cls: name for name, cls in ACTIVATION_LAYERS.items()}
    name = names.get(activation, activation)
    if name not in ACTIVATIONS:
        shown = getattr(activation, "__name__", activation)
        raise UsageError(f"policy_kwargs activation_fn {shown!r}; the custom agents take nn.ReLU or nn.Tanh")
    return str(name)


def image_extractor(policy_kwargs: dict[str, Any], layer_norm: bool) -> dict[str, Any]:
    """The spec of the image extractor ``policy_kwargs`` name (none: the Nature CNN, which specs
    written before the choice existed mean too)."""
    chosen = policy_kwargs.get("features_extractor_class")
    name = getattr(chosen, "__name__", chosen)
    if chosen is None:
        name = "NatureCNN"
    elif name not in EXTRACTORS or (name == "LeanCNN" and chosen is not LeanCNN):
        valid = ", ".join(EXTRACTORS)
        raise UsageError(f"policy_kwargs features_extractor_class={name!r} is not built by the custom agents; valid: {valid}")
    kwargs = policy_kwargs.get("features_extractor_kwargs") or {}
    if not isinstance(kwargs, dict) or set(kwargs) - {"features_dim"}:
        raise UsageError(f"policy_kwargs features_extractor_kwargs must be a dict of features_dim only, got {kwargs!r}")
    if EXTRACTORS[name] == "nature":
        if kwargs.get("features_dim", CNN_FEATURES) != CNN_FEATURES:
            raise UsageError(f"the Nature CNN gives {CNN_FEATURES} features, got features_dim={kwargs['features_dim']!r}")
        return {}
    features = kwargs.get("features_dim", LEAN_FEATURES)
    if not isinstance(features, int) or isinstance(features, bool) or features < 1:
        raise UsageError(f"policy_kwargs features_extractor_kwargs features_dim must be an integer >= 1, got {features!r}")
    if layer_norm:
        raise UsageError("policy_kwargs layer_norm=True is not built with LeanCNN; use the Nature CNN (the default)")
    return {"extractor": "lean", "features": features}


class ScaledLeanCNN(LeanCNN):
    """:class:`agents.common.networks.lean_cnn.LeanCNN` on uint8 frames, scaled here as our Nature CNN does."""

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return super().forward(observations.float() / 255.0)


class NatureCNN(nn.Module):
    """Mnih et al. (2015): three convolutions and a 512-unit layer; uint8 in, scaled here.
    ``layer_norm``: a LayerNorm after each convolution and the dense layer (PQN's network)."""

    def __init__(self, shape: list[int], layer_norm: bool = False) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        size, channels = torch.zeros(1, *shape), shape[0]
        for out_channels, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            conv = nn.Conv2d(channels, out_channels, kernel_size=kernel, stride=stride)
            with torch.no_grad():
                size = conv(size)
            layers += [conv, nn.LayerNorm(list(size.shape[1:])), nn.ReLU()] if layer_norm else [conv, nn.ReLU()]
            channels = out_channels
        self.convs = nn.Sequential(*layers, nn.Flatten())
        dense = [nn.Linear(size.numel(), CNN_FEATURES)] + ([nn.LayerNorm(CNN_FEATURES)] if layer_norm else [])
        self.linear = nn.Sequential(*dense, nn.ReLU())

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
        offsets = self.get_buffer("offsets")
        return hot.scatter_(1, values.long().reshape(values.shape[0], -1) + offsets, 1.0)


def _encoder(spec: dict[str, Any], layer_norm: bool) -> tuple[nn.Module, int]:
    if spec["kind"] == "image" and spec.get("extractor") == "lean":
        space = spaces.Box(0, 255, tuple(spec["shape"]), np.uint8)
        return ScaledLeanCNN(space, spec["features"]), spec["features"]
    if spec["kind"] == "image":
        return NatureCNN(spec["shape"], layer_norm), CNN_FEATURES
    if spec["kind"] == "multi_discrete":
        encoder = OneHot(spec["nvec"])
        return encoder, encoder.size
    return nn.Flatten(), spec["size"]


class QNetwork(nn.Module):
    """Q-values (batch, n_actions) of an observation: a tensor, or a dict of tensors."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        self.spec = spec
        layer_norm = spec.get("layer_norm", False)
        activation = ACTIVATION_LAYERS[spec.get("activation", "relu")]
        encoders, width = {}, 0
        for key, part in spec["parts"].items():
            encoders[key or "observation"], size = _encoder(part, layer_norm)
            width += size
        self.encoders = nn.ModuleDict(encoders)
        self.features_width = width  # what the encoders hand the head
        layers: list[nn.Module] = []
        for hidden in spec["net_arch"]:
            layers += [nn.Linear(width, hidden), *([nn.LayerNorm(hidden)] if layer_norm else []), activation()]
            width = hidden
        layers.append(nn.Linear(width, spec["n_actions"]))
        self.head = nn.Sequential(*layers)
        self._single = list(spec["parts"]) == [""]

    def features(self, observation: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
        """What the encoders make of an observation, before the head (``features_width`` wide)."""
        if self._single:
            return self.encoders["observation"](observation)
        return torch.cat([self.encoders[key](observation[key]) for key in self.spec["parts"]], dim=1)

    def forward(self, observation: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(self.features(observation))


def settings_of(
    config_class: type[QConfig], section: Section, observation_space: Any, action_space: Any, **policy_defaults: Any
) -> tuple[Any, dict[str, Any]]:
    """An agent's config and network spec from a (checked) config section and the spaces it will
    see; ``policy_defaults``: the algorithm's own ``policy_kwargs`` defaults (PQN's LayerNorm)."""
    policy_kwargs = {**policy_defaults, **section.network}
    names = {f.name for f in fields(config_class)} - {"policy_kwargs"}  # the network's, in the spec
    config = config_class(**{k: v for k, v in section.algo_kwargs.items() if k in names})
    return config, network_spec(observation_space, int(action_space.n), section.policy, policy_kwargs)
