"""Each hyperparameter is declared once (agents/common/configuration/hyperparameters.py): the checks, the agents'
configs, the resumable keys and the docs' tables all come from that declaration."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from stable_baselines3 import DQN

from agents import custom_train
from agents.common.configuration.config import ConfigError, build_section
from agents.common.configuration.config_files import load_section, shipped_config
from agents.common.configuration.hyperparameters import OurDQNConfig, PQNConfig, SB3DQNConfig, describe_keys, keys_of
from agents.common.configuration.registry import ALGORITHMS
from agents.sb3.sb3_dqn import TRANSLATED_KEYS
from agents.session.cli import run_cli


def test_the_declared_defaults_are_stable_baselines3s_own():
    sb3_defaults = {name: p.default for name, p in inspect.signature(DQN.__init__).parameters.items()}
    declared = {f.name: f.default for f in dataclasses.fields(SB3DQNConfig) if f.name not in TRANSLATED_KEYS}
    assert declared.keys() <= sb3_defaults.keys(), "every DQN key is one of SB3's DQN arguments, or translated for it"
    assert declared == {name: sb3_defaults[name] for name in declared}


def test_an_agents_config_defaults_are_its_declarations_and_a_section_overrides_them():
    algo = ALGORITHMS["custom"]
    config = OurDQNConfig()
    assert (config.buffer_size, config.double_q, config.learning_rate) == (1_000_000, True, 1e-4)
    section = build_section(
        "UAVGrid-v0", load_section(shipped_config("dqn.yml"), "UAVGrid-v0"), {"batch_size": 64}, algo.schema
    )
    config = algo.implementation().settings(section, *_spaces("UAVGrid-v0"))[0]
    assert isinstance(config, OurDQNConfig) and config.batch_size == 64


@pytest.mark.parametrize("name", ALGORITHMS)
def test_every_declared_key_is_checked_and_described(name):
    algo = ALGORITHMS[name]
    assert dict(algo.keys) == dict(keys_of(algo.config_class))
    rows = describe_keys(algo.config_class)
    assert [row[0] for row in rows] == list(algo.keys) and all(meaning for *_, meaning in rows)
    schedules = ("learning_rate", "exploration_fraction", "exploration_initial_eps", "exploration_final_eps", "max_grad_norm")
    schedules = tuple(key for key in schedules if key in algo.keys)  # PPO explores by its policy: no epsilon
    teachers = tuple(key for key in ("teacher_share_fraction", "kickstart_fraction") if key in algo.keys)  # their schedules
    assert set(algo.resumable_keys) == {*schedules, *teachers}, "what --resume may change: the schedules, not the model"


def test_a_value_out_of_its_declared_range_is_refused_naming_the_range():
    with pytest.raises(ConfigError, match=r"gamma=1\.5 must be a number in \[0, 1\]"):
        build_section(
            "UAVGrid-v0", {"policy": "MultiInputPolicy", "n_timesteps": 10}, {"gamma": 1.5}, ALGORITHMS["pqn"].schema
        )


def test_pqns_rollout_length_has_a_name_of_its_own_and_the_old_one_is_refused(tmp_path, capsys):
    assert PQNConfig().rollout_steps == 32 and not hasattr(PQNConfig(), "n_steps")
    argv = ["--algo", "pqn", "--env", "UAVGrid-v0", "--hyperparams", "n_steps=8", "--log-dir", str(tmp_path)]
    assert run_cli(custom_train.main, argv) == 2
    renamed = "hyperparameter 'n_steps' of --algo pqn is now called 'rollout_steps'"
    assert capsys.readouterr().err == f"error: {renamed}: rename it in section 'UAVGrid-v0'\n"
    assert not any(tmp_path.iterdir()), "nothing written"


def _spaces(env_id):
    from agents.environments.envs import probe_spaces

    return probe_spaces(env_id, {}, None)
