"""An RLlib PPO policy as our player, without Ray: the network rebuilt from weights under RLlib's
names, its settings checked, the --algo rllib_ppo flags refused where they do not apply. (The
network's logits equal RLlib's own module's: test_rllib.py, where Ray is installed.)"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from agents import train
from agents.common.errors import UsageError
from agents.rllib.network import PolicyNetwork, network_settings, policy_network, rllib_weights, same_padding
from tests.helpers import refused


def rllib_named(network: PolicyNetwork, encoder_prefix: str, cnn: bool) -> dict[str, np.ndarray]:
    """``network``'s weights under the names RLlib's PPO module gives them, with a value head beside."""
    inner = "net.0.cnn." if cnn else "net.mlp."
    state = {
        f"{encoder_prefix}{inner}{k.removeprefix('encoder.')}": v.numpy()
        for k, v in network.state_dict().items()
        if k.startswith("encoder.")
    }
    state |= {
        f"pi.net.mlp.0.{k.removeprefix('pi.')}": v.numpy() for k, v in network.state_dict().items() if k.startswith("pi.")
    }
    state |= {"vf.net.mlp.0.weight": np.ones((1, 3), np.float32), "pi.log_std_clip_param_const": np.ones(1, np.float32)}
    return state


@pytest.mark.parametrize("prefix", ["encoder.encoder.", "encoder.actor_encoder."])
@pytest.mark.parametrize(
    "shape, kwargs",
    [((11,), "dict(net_arch=[32, 16], activation_fn=nn.ReLU)"), ((36, 36, 1), "dict(conv_filters=[[8, 4, 2], [16, 3, 1]])")],
)
def test_rllib_weights_load_by_name_and_give_the_same_logits(prefix, shape, kwargs):
    torch.manual_seed(0)
    original = PolicyNetwork(shape, 9, network_settings(kwargs))
    rebuilt = policy_network(rllib_named(original, prefix, len(shape) == 3), shape, 9, kwargs)
    observations = torch.rand(5, *shape)
    torch.testing.assert_close(rebuilt(observations), original(observations), rtol=0, atol=0)


def test_weights_of_another_network_are_refused_naming_the_shapes():
    torch.manual_seed(0)
    weights = rllib_named(PolicyNetwork((11,), 9, network_settings(None)), "encoder.encoder.", False)
    with pytest.raises(UsageError, match=r"do not fit the run's network \(12,\) -> 9"):
        policy_network(weights, (12,), 9, None)
    assert "vf.net.mlp.0.weight" not in {f"encoder.{k}" for k in rllib_weights(weights)}


def test_same_padding_is_rllibs():
    assert same_padding((64, 64), 8, 4) == ((2, 2, 2, 2), (16, 16))
    assert same_padding((16, 16), 4, 2) == ((1, 1, 1, 1), (8, 8))
    assert same_padding((36, 36), 3, 1) == ((1, 1, 1, 1), (36, 36))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ("dict(net_arch=[0])", "net_arch must be a list of layer widths >= 1, got [0]"),
        ("dict(activation_fn=nn.ELU)", "activation_fn"),
        ("dict(conv_filters=[[16, 8]])", "conv_filters must be a list of [channels, kernel, stride]"),
        ("dict(features_extractor_class=LeanCNN)", "policy_kwargs features_extractor_class: RLlib's PPO network takes"),
    ],
)
def test_bad_network_settings_are_refused(kwargs, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("(", r"\(")):
        network_settings(kwargs)


def test_a_ray_address_is_refused_for_the_algorithms_that_train_in_this_process(tmp_path, capsys):
    for address in ("auto", ""):  # an empty address is given too
        err = refused(capsys, train.main, ["--algo", "custom", "--address", address, "--log-dir", str(tmp_path)], tmp_path)
        assert err == "error: --address: an option of --algo rllib_ppo, not of custom DQN"
    err = refused(capsys, train.main, ["--algo", "rllib_ppo", "--amp", "--log-dir", str(tmp_path)], tmp_path)
    assert err == "error: --amp: an option of --algo custom, pqn, distill, kickstart, finetune, ppo, not of RLlib PPO"


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_rllib_ppo_without_ray_says_what_to_install(tmp_path, capsys):
    err = refused(capsys, train.main, ["--algo", "rllib_ppo", "--env", "BallDuel-v0", "--log-dir", str(tmp_path)], tmp_path)
    assert err == 'error: --algo rllib_ppo needs Ray RLlib: pip install "ballenvs[rllib]"'
