"""The shipped config sections (agents/zoo_configs): every env has one, its numbers read as numbers,
and the RL Zoo trains from ours."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ballenvs
from agents.common.configuration.config import build_section, schedule
from agents.common.configuration.config_files import load_section, load_sections, shipped_config
from agents.common.configuration.registry import ALGORITHMS
from tests.agents.test_sb3_train import DEFAULT_CONFIG, DQN_SCHEMA
from tests.helpers import REPO


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_every_env_has_a_config_section_with_numbers_as_numbers(env_id):
    raw = load_section(DEFAULT_CONFIG, env_id)
    section = build_section(env_id, raw, {}, DQN_SCHEMA)
    assert section.policy in ("CnnPolicy", "MlpPolicy", "MultiInputPolicy")
    # YAML reads 1e-4 as a string: the file must write floats (or lin_ schedules) so safe_load gives numbers.
    rate = section.algo_kwargs["learning_rate"]
    assert isinstance(rate, float) or (rate.startswith("lin_") and schedule(rate)[0] > 0)


def test_the_shipped_pqn_config_has_every_env():
    sections = load_sections(shipped_config("pqn.yml"))
    for env_id in ballenvs.ENV_IDS:
        build_section(env_id, sections[env_id], {}, ALGORITHMS["pqn"].schema)
    assert "the RL Zoo does not read this file" in shipped_config("pqn.yml").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_rl_zoo_trains_from_our_config(tmp_path, env_id):
    command = [
        sys.executable, "-m", "rl_zoo3.train", "--algo", "dqn", "--env", env_id, "--gym-packages", "ballenvs",
        "-conf", str(REPO / "zoo_configs" / "dqn.yml"), "-n", "500", "-f", str(tmp_path), "--eval-freq", "-1",
        "--device", "cpu", "-params", "buffer_size:1000", "learning_starts:100",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "dqn" / f"{env_id}_1" / f"{env_id}.zip").is_file()
