"""The package works anywhere: the wheel carries the hyperparameter files and an installed copy finds
them; an editable install of a clone named ``ballenvs`` is found from the clone's parent, where
the clone's own folder could pass for the package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.contracts.docs_examples import blocks, budgeted, commands
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


def see_this_environment(python: str) -> None:
    """Make a new venv see the packages of the interpreter running the tests, as its own site
    folders after the venv's. ``--system-site-packages`` would not: when the tests run in a venv, it
    shows the base interpreter's packages (an old setuptools, no wheel, no gymnasium), not the venv's."""
    ours = [folder for folder in sys.path if folder.endswith(("site-packages", "dist-packages"))]
    found = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    lines = "".join(f"import site; site.addsitedir({folder!r})\n" for folder in ours)
    (Path(found.stdout.strip()) / "zz_tests_environment.pth").write_text(lines)  # after the venv's own .pth files


@pytest.mark.slow
def test_a_clone_named_ballenvs_installed_as_the_readme_says_runs_the_readme_from_its_parent(tmp_path):
    """``git clone .../ballenvs`` makes a folder named as the package; from its parent, Python's path
    starts with that folder, which has no __init__.py and would be imported as an empty namespace
    package unless the install puts the real one on the path (pyproject.toml's package-dir)."""
    clone = tmp_path / "ballenvs"
    clone.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, clone / name)
    for package in ("ballenvs", "agents"):
        shutil.copytree(REPO / package, clone / package, ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"  # this one's packages seen through it, the clone installed into it alone
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    see_this_environment(python)
    install = [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(clone)]
    installed = subprocess.run(install, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, f"pip install -e of the clone: {installed.stderr[-3000:]}"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", MPLBACKEND="Agg")

    def run(*argv: str) -> str:
        done = subprocess.run([python, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{argv} from the clone's parent: {done.stderr[-3000:]}"
        return done.stdout

    assert run("-c", "import ballenvs; print(ballenvs.__file__)").strip() == str(clone / "ballenvs" / "__init__.py")
    readme = blocks(REPO / "README.md")
    for block in readme:
        if block.lang == "python":
            run("-c", block.code)
    ran = []
    for block in readme:
        for words, _ in commands(block) if block.lang == "bash" else []:
            if words[:2] == ["python", "-m"] and words[2].startswith("agents."):
                run("-m", words[2], *budgeted(words[2], words[3:]))
                ran.append(words[2])
    assert ran.count("agents.train") >= 2 and "agents.evaluate" in ran, ran
