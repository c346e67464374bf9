"""agents.common.configuration.config: what a config file and --hyperparams are read as."""

from __future__ import annotations

import pytest
import yaml

from agents.common.configuration.config import RUN_KEYS, ConfigError, build_section, parse_overrides
from tests.agents.test_sb3_train import DQN_SCHEMA


def test_yaml_float_pitfall_is_caught():
    raw = yaml.safe_load("learning_rate: 1e-4\npolicy: CnnPolicy\nn_timesteps: 10\n")
    with pytest.raises(ConfigError, match="learning_rate='1e-4' must be a number"):
        build_section("BallDuel-v0", raw, {}, DQN_SCHEMA)


def test_overrides_parse_python_literals_and_words():
    parsed = parse_overrides(
        ["learning_rate=1e-4", "policy=CnnPolicy", "policy_kwargs=dict(net_arch=[64])", "flag=True", "sizes=[1, 2]"],
        "--hyperparams",
    )
    assert parsed == {
        "learning_rate": 1e-4,
        "policy": "CnnPolicy",
        "policy_kwargs": "dict(net_arch=[64])",
        "flag": True,
        "sizes": [1, 2],
    }
    run_keys = {"n_timesteps", "policy", "n_envs", "frame_stack", "env_kwargs", "self_play", "eval_freq", "eval_episodes"}
    assert set(RUN_KEYS) == run_keys
