"""The wheel works anywhere: it carries the hyperparameter files, and an installed copy finds them."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from tests.helpers import REPO


@pytest.mark.slow
def test_the_wheel_ships_the_configs_and_an_installed_copy_loads_them(tmp_path):
    build = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        str(REPO),
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(tmp_path / "dist"),
        "-q",
    ]
    subprocess.run(build, check=True, capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("ballenvs-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "agents/zoo_configs/dqn.yml" in names and "ballenvs/__init__.py" in names
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)], check=True, timeout=300
    )
    code = (
        "import agents, agents.common.configuration.config_files as c\n"
        "print(agents.__file__)\n"
        "print(sorted(c.load_sections(c.shipped_config('dqn.yml'))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    where, sections = result.stdout.splitlines()
    assert where.startswith(str(site)), "the installed copy, not the checkout"
    assert sections == "['BallDuel-v0', 'BallSumo-v0', 'UAVGrid-v0', 'UAVGridImage-v0']"
