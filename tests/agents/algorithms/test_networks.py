"""The custom agents' networks: what a spec says is what is built, and specs written before a
choice existed still mean what they meant."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from torch import nn

from agents.algorithms.networks import QNetwork, network_spec
from agents.common.errors import UsageError
from agents.session.checkpoint import check_spec

STATE = spaces.Box(-1.0, 1.0, (11,), np.float32)


def test_a_relu_spec_is_written_as_before_the_activation_could_be_chosen():
    spec = network_spec(STATE, 9, "MlpPolicy", {"net_arch": [32, 32]})
    assert "activation" not in spec  # older runs' files hold exactly this spec
    hidden = [type(layer) for layer in QNetwork(spec).head]
    assert hidden == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]


@pytest.mark.parametrize("given", [nn.Tanh, "tanh"])
def test_tanh_hidden_layers_as_the_zoo_writes_them(given):
    spec = network_spec(STATE, 9, "MlpPolicy", {"net_arch": [32, 32], "activation_fn": given})
    assert spec["activation"] == "tanh"
    assert [type(layer) for layer in QNetwork(spec).head] == [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear]
    check_spec(spec, "model")  # a file holding it reads back


def test_an_activation_the_custom_agents_lack_is_refused_by_name():
    with pytest.raises(UsageError, match=r"activation_fn 'GELU'.*nn.ReLU or nn.Tanh"):
        network_spec(STATE, 9, "MlpPolicy", {"activation_fn": nn.GELU})


def test_a_file_naming_an_unknown_activation_is_refused():
    spec = {**network_spec(STATE, 9, "MlpPolicy", {}), "activation": "os.system"}
    with pytest.raises(UsageError, match=r"spec activation 'os.system'; valid: relu, tanh"):
        check_spec(spec, "model")
