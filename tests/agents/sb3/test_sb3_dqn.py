"""stable-baselines3's DQN as built here: the n-step buffer of dict observations sums as our
agents' buffer does, and the section's keys become DQN's arguments (the buffer, the zoo's schedules)."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from agents.common.configuration.config import ConfigError, build_section
from agents.common.configuration.config_files import load_section
from agents.sb3.buffers import DictNStepReplayBuffer
from agents.sb3.sb3_dqn import dqn_kwargs
from tests import n_step_case
from tests.agents.test_sb3_train import DEFAULT_CONFIG, DQN_SCHEMA


def test_dict_n_step_buffer_sums_as_the_custom_agents_buffer():
    n_steps, gamma = 3, 0.5
    space = spaces.Dict({"value": spaces.Box(0, 100, (1,), np.float32)})
    # 14 slots over 2 envs: 7 rows, so the six steps fit without wrapping.
    buffer = DictNStepReplayBuffer(14, space, spaces.Discrete(20), n_envs=2, n_steps=n_steps, gamma=gamma)
    for step in n_step_case.steps():  # SB3's buffer: dones, and a truncation said in each info
        value = step.observations
        infos = [
            {"TimeLimit.truncated": bool(ended and not terminated)} for ended, terminated in zip(step.ended, step.terminated)
        ]
        buffer.add({"value": value}, {"value": value + 0.5}, value.astype(np.int64), step.rewards, step.ended, infos)
    batch = buffer.sample(200)
    seen = n_step_case.check_sampled(batch, n_steps, gamma, batch.next_observations["value"][:, 0], batch.dones)
    assert len(seen) == 12


def test_n_steps_on_dict_observations_selects_the_dict_n_step_buffer():
    space = spaces.Dict({"value": spaces.Box(0, 1, (1,))})
    kwargs = dqn_kwargs({"n_steps": 4, "gamma": 0.9}, space)
    assert kwargs["n_steps"] == 1 and kwargs["replay_buffer_class"] is DictNStepReplayBuffer
    assert kwargs["replay_buffer_kwargs"] == {"n_steps": 4, "gamma": 0.9}
    assert dqn_kwargs({"n_steps": 4}, spaces.Box(0, 1, (1,))) == {"n_steps": 4}  # SB3's own NStepReplayBuffer


def test_linear_learning_rate_is_the_zoos_schedule():
    section = build_section(
        "UAVGrid-v0", load_section(DEFAULT_CONFIG, "UAVGrid-v0"), {"learning_rate": "lin_2.0e-4"}, DQN_SCHEMA
    )
    rate = dqn_kwargs(section.algo_kwargs, spaces.Box(0, 1, (1,)))["learning_rate"]
    assert rate(1.0) == pytest.approx(2e-4) and rate(0.25) == pytest.approx(5e-5)
    with pytest.raises(ConfigError, match=r"learning_rate='log_1e-4' must be a number > 0, or lin_<number>"):
        build_section(
            "UAVGrid-v0",
            {"policy": "MlpPolicy", "n_timesteps": 10, "learning_rate": "log_1e-4"},
            {},
            DQN_SCHEMA,
        )
