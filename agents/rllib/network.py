"""An RLlib PPO policy as one of our players, rebuilt from its weights and the run's config:
neither Ray nor code from a file is needed to play it.

RLlib's default PPO module (``DefaultPPOTorchRLModule``) acts with ``pi(encoder(obs))``: for a
vector, an MLP encoder (``fcnet_hiddens``, ``fcnet_activation``) and a linear head; for a picture
(height, width, channels; float frames: the envs' ``pixel_dtype="float32"``), a CNN encoder
(``conv_filters``, each ``[channels, kernel, stride]`` with "same" padding, ReLU), flattened
channels-last, and a linear head. :class:`PolicyNetwork` is that network, layer for layer, so
RLlib's weights load into it by name (:func:`rllib_weights`); its outputs are the action logits,
which our players play greedily as they play Q-values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from agents.common.configuration.config import parse_kwargs
from agents.common.errors import UsageError
from agents.common.readers import weight_arrays

#: The activations RLlib's MLP encoders take, by the names the RL Zoo's policy_kwargs give them.
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}
#: What PPO's network is by default: RLlib's DefaultModelConfig's MLP, and for pictures the
#: Atari-sized CNN of its default filters, which fits both 36x36 and 64x64 frames.
DEFAULT_HIDDEN, DEFAULT_ACTIVATION = [256, 256], "tanh"
DEFAULT_CONV_FILTERS = [[16, 8, 4], [32, 4, 2], [64, 3, 1]]
#: The prefixes of the policy's layers in an RLlib module's state (a shared or an actor encoder).
_ENCODER_PREFIXES = ("encoder.encoder.", "encoder.actor_encoder.")
_PI_PREFIX = "pi.net.mlp."


@dataclass(frozen=True)
class NetworkSettings:
    """The policy network: the MLP's hidden widths and activation, and a picture's conv filters."""

    hidden: tuple[int, ...] = tuple(DEFAULT_HIDDEN)
    activation: str = DEFAULT_ACTIVATION
    conv_filters: tuple[tuple[int, int, int], ...] = tuple(map(tuple, DEFAULT_CONV_FILTERS))  # type: ignore[arg-type]

    def model_config(self, picture: bool) -> dict[str, Any]:
        """RLlib's ``DefaultModelConfig`` keywords for this network."""
        if picture:
            return {"conv_filters": [list(f) for f in self.conv_filters], "conv_activation": "relu", "head_fcnet_hiddens": []}
        return {"fcnet_hiddens": list(self.hidden), "fcnet_activation": self.activation, "head_fcnet_hiddens": []}


def network_settings(policy_kwargs: Any) -> NetworkSettings:
    """``policy_kwargs`` as the RL Zoo writes them (``net_arch``, ``activation_fn``) plus
    ``conv_filters``; anything else, or a bad value, is one line naming it."""
    kwargs = parse_kwargs("policy_kwargs", policy_kwargs)
    unknown = sorted(set(kwargs) - {"net_arch", "activation_fn", "conv_filters"})
    if unknown:
        raise UsageError(
            f"policy_kwargs {', '.join(unknown)}: RLlib's PPO network takes net_arch, activation_fn, conv_filters"
        )
    hidden = kwargs.get("net_arch", DEFAULT_HIDDEN)
    if not isinstance(hidden, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in hidden):
        raise UsageError(f"policy_kwargs net_arch must be a list of layer widths >= 1, got {hidden!r}")
    activation = kwargs.get("activation_fn", DEFAULT_ACTIVATION)
    names = {cls: name for name, cls in ACTIVATIONS.items()}
    activation = names.get(activation, activation)
    if activation not in ACTIVATIONS:
        raise UsageError(f"policy_kwargs activation_fn {activation!r}; RLlib's PPO takes {', '.join(ACTIVATIONS)}")
    filters = kwargs.get("conv_filters", DEFAULT_CONV_FILTERS)
    if not isinstance(filters, list) or not filters or not all(_is_filter(f) for f in filters):
        raise UsageError(
            f"policy_kwargs conv_filters must be a list of [channels, kernel, stride] (ints >= 1), got {filters!r}"
        )
    return NetworkSettings(tuple(hidden), activation, tuple(tuple(f) for f in filters))


def _is_filter(spec: Any) -> bool:
    return isinstance(spec, (list, tuple)) and len(spec) == 3 and all(isinstance(n, int) and n >= 1 for n in spec)


def same_padding(size: tuple[int, int], kernel: int, stride: int) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """RLlib's "same" padding: (left, right, top, bottom) and the output's (height, width)."""
    out = (math.ceil(size[0] / stride), math.ceil(size[1] / stride))
    pad_h, pad_w = ((o - 1) * stride + kernel - s for o, s in zip(out, size))
    return (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2), out


class PolicyNetwork(nn.Module):
    """Observations (N, *shape) float32 -> action logits (N, n_actions), as RLlib's PPO acts."""

    def __init__(self, observation_shape: tuple[int, ...], n_actions: int, settings: NetworkSettings) -> None:
        super().__init__()
        self.picture = len(observation_shape) == 3
        layers: list[nn.Module] = []
        if self.picture:
            size, channels = (observation_shape[0], observation_shape[1]), observation_shape[2]
            for out_channels, kernel, stride in settings.conv_filters:
                padding, size = same_padding(size, kernel, stride)
                layers += [nn.ZeroPad2d(padding), nn.Conv2d(channels, out_channels, kernel, stride), nn.ReLU()]
                channels = out_channels
            features = channels * size[0] * size[1]
        else:
            features = int(np.prod(observation_shape))
            for width in settings.hidden:
                layers += [nn.Linear(features, width), ACTIVATIONS[settings.activation]()]
                features = width
        self.encoder = nn.Sequential(*layers)
        self.pi = nn.Linear(features, n_actions)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.float()
        if self.picture:  # RLlib's frames are channels-last, and so are its CNN's features when flattened
            return self.pi(self.encoder(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1).flatten(1))
        return self.pi(self.encoder(x))


def rllib_weights(state: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """An RLlib PPO module's state (its ``state_dict`` as arrays) as :class:`PolicyNetwork`'s:
    the policy's layers renamed, the value function's left out."""
    weights = {}
    for name, value in state.items():
        prefix = next((p for p in _ENCODER_PREFIXES if name.startswith(p)), None)
        if prefix is not None:
            layer = name[len(prefix) :].removeprefix("net.mlp.").removeprefix("net.0.cnn.")
            weights[f"encoder.{layer}"] = torch.as_tensor(np.asarray(value))
        elif name.startswith(_PI_PREFIX) and name[len(_PI_PREFIX) :].startswith("0."):
            weights[f"pi.{name[len(_PI_PREFIX) + 2 :]}"] = torch.as_tensor(np.asarray(value))
    return weights


class RLlibPolicy:
    """A trained RLlib policy as our loaders return models: ``predict`` and its logits as ``q_net``."""

    def __init__(self, network: PolicyNetwork, device: str) -> None:
        self.q_net, self.device = network.to(device).eval(), torch.device(device)

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False
    ) -> tuple[np.ndarray, None]:
        with torch.inference_mode():
            logits = self.q_net(torch.as_tensor(np.asarray(observation), device=self.device)).float()
        if deterministic:
            return logits.argmax(dim=1).cpu().numpy(), None
        return torch.distributions.Categorical(logits=logits).sample().cpu().numpy(), None


def policy_network(
    weights: Mapping[str, Any], observation_shape: tuple[int, ...], n_actions: int, policy_kwargs: Any
) -> PolicyNetwork:
    """The policy a module's state holds, or one line saying why it does not fit the run's network."""
    network = PolicyNetwork(observation_shape, n_actions, network_settings(policy_kwargs))
    try:
        network.load_state_dict(rllib_weights(weights))
    except RuntimeError as error:
        problems = " ".join(line.strip() for line in str(error).splitlines()[1:]) or str(error)  # torch's: a line each
        raise UsageError(
            f"RLlib weights do not fit the run's network {observation_shape} -> {n_actions}: {problems}"
        ) from None
    return network


def load_policy(model_path: Path, run_config: dict[str, Any], device: str) -> RLlibPolicy:
    """A model of an RLlib run (``<name>.npz``: its module's weights, read without pickle)."""
    from agents.artifacts.models import spaces_of  # the models room reads the registry, which names this loader

    weights = weight_arrays(model_path, "RLlib model")
    observation_space, action_space = spaces_of(run_config)
    policy_kwargs = run_config["hyperparams"].get("policy_kwargs")
    if not isinstance(action_space, spaces.Discrete):
        raise UsageError(f"model {str(model_path)!r}: its run's actions are {action_space}, not discrete")
    network = policy_network(weights, tuple(observation_space.shape or ()), int(action_space.n), policy_kwargs)
    return RLlibPolicy(network, device)


def load_snapshot(model_path: Path, run_config: dict[str, Any], device: str) -> RLlibPolicy:
    raise UsageError(f"{str(model_path)!r}: an RLlib run keeps its self-play pool inside Ray and writes no snapshots")
