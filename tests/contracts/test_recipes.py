"""CONTRIBUTING's recipes, followed: a new game, a new algorithm, a new command and a new benchmark
need only the pieces the recipes name, and every tool then knows them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import ballenvs
from agents import compare, custom_train, tune
from agents.artifacts.runs import read_config
from agents.common.configuration.registry import ALGORITHMS, CUSTOM_TRAINER, Algorithm
from agents.common.errors import UsageError
from agents.evaluate import main as evaluate_main
from agents.session.cli import Parser, run_cli
from tests.helpers import TESTS, tiny_run

RECIPES = TESTS / "recipes"
sys.path.insert(0, str(RECIPES))


#: The toys of recipe "add an algorithm": a Q-learner, and one that is not (REINFORCE).
TOYS = {"toy_algorithm": "toy online Q", "toy_reinforce": "toy REINFORCE"}


def register_toy(monkeypatch, module: str = "toy_algorithm") -> Algorithm:
    """Recipe "add an algorithm": its module (recipes/<module>.py), one registry entry, a config file."""
    toy = Algorithm(
        "toy",
        TOYS[module],
        CUSTOM_TRAINER,
        str(RECIPES / "toy.yml"),
        f"{module}:Config",  # its hyperparameters, in its own module
        module=module,
        suffix=".pt",
        loader="agents.algorithms.policy:load_policy",
        snapshot_loader="agents.algorithms.policy:load_snapshot",
        replay_buffer=False,
    )
    monkeypatch.setitem(ALGORITHMS, toy.name, toy)  # what register(toy) does, undone after the test
    return toy


@pytest.fixture
def toy_algorithm(monkeypatch):
    return register_toy(monkeypatch)


@pytest.fixture
def corridor(monkeypatch):
    """Recipe "add an environment": the game and its faces (recipes/toy_game.py), its reference, one
    entry in ballenvs' table of ids."""
    spec = {
        "entry_point": "toy_game:CorridorEnv",
        "vector_entry_point": "toy_game:CorridorVectorEnv",
        "max_episode_steps": 50,
        "reference": "toy_game:REFERENCE",
    }
    monkeypatch.setitem(ballenvs._ENV_SPECS, "Corridor-v0", spec)
    monkeypatch.setattr(ballenvs, "ENV_IDS", tuple(ballenvs._ENV_SPECS))
    ballenvs._register_all()
    return "Corridor-v0"


@pytest.mark.slow  # trains, compares and tunes each toy
@pytest.mark.parametrize("module", TOYS)
def test_a_new_algorithm_is_its_module_a_registry_entry_and_a_config_file(module, monkeypatch, tmp_path, capsys):
    register_toy(monkeypatch, module)
    argv = ["--algo", "toy", "--env", "UAVGrid-v0", "--timesteps", "200", "--eval-freq", "100", "--eval-episodes", "1"]
    assert run_cli(custom_train.main, [*argv, "--no-progress", "--log-dir", str(tmp_path)]) == 0
    run_dir = tmp_path / "toy" / "UAVGrid-v0_1"
    assert read_config(run_dir)["algo"] == "toy"
    assert run_cli(evaluate_main, [str(run_dir / "final_model.pt"), "--episodes", "1"]) == 0
    # The other tools take the registry's name too.
    assert (
        run_cli(
            compare.main,
            ["--agents", "toy", "--env", "UAVGrid-v0", *tiny_run(), "--seeds", "1"]
            + ["--score-episodes", "1", "--log-dir", str(tmp_path / "c")],
        )
        == 0
    )
    assert TOYS[module] in next((tmp_path / "c" / "compare").glob("*/report.md")).read_text()
    study = ["--algo", "toy", "--env", "UAVGrid-v0", "--trials", "1", "--timesteps", "200", "--eval-freq", "100"]
    study += ["--search-space", str(RECIPES / "toy_search.yml"), "--log-dir", str(tmp_path / "t")]
    assert run_cli(tune.main, study) == 0
    assert list((tmp_path / "t").glob("UAVGrid-v0-toy/trial_0/toy/UAVGrid-v0_1/final_model.pt"))
    assert "toy" in capsys.readouterr().out


def test_an_algorithm_of_another_trainer_is_refused_by_name(tmp_path, capsys):
    assert run_cli(custom_train.main, ["--algo", "dqn", "--log-dir", str(tmp_path)]) == 2
    assert "--algo 'dqn' (SB3 DQN) is trained by python -m agents.sb3_train" in capsys.readouterr().err
    assert not tmp_path.joinpath("dqn").exists()


def test_a_new_game_is_its_game_two_faces_a_reference_and_a_table_entry(corridor, toy_algorithm, tmp_path):
    env = gym.make(corridor)
    check_env(env.unwrapped)
    sb3_check_env(env)
    vector = gym.make_vec(corridor, num_envs=3)
    observations, _ = vector.reset(seed=0)
    assert observations.shape == (3, 2)
    assert gym.spec(corridor).max_episode_steps == 50
    argv = ["--algo", "toy", "--env", corridor, "--eval-freq", "200", "--eval-episodes", "2", "--no-progress"]
    assert run_cli(custom_train.main, [*argv, "--log-dir", str(tmp_path)]) == 0
    assert (tmp_path / "toy" / f"{corridor}_1" / "final_model.pt").is_file()


def count_runs(argv: list[str] | None = None) -> int:
    """Recipe "add a command": agents.common's parser, errors and exit codes."""
    parser = Parser(prog="python -m agents.count_runs", description="How many runs a log folder holds.")
    parser.add_argument("log_dir")
    args: argparse.Namespace = parser.parse_args(argv)
    if not Path(args.log_dir).is_dir():
        raise UsageError(f"--log-dir {args.log_dir!r} is not a folder")
    runs = [path for path in Path(args.log_dir).glob("*/*") if (path / "config.yml").is_file()]
    print(f"{len(runs)} runs")
    return len(runs)


def test_a_new_command_gets_the_shared_flags_errors_and_exits(tmp_path, capsys):
    assert run_cli(count_runs, [str(tmp_path)]) == 0
    assert capsys.readouterr().out == "0 runs\n"
    assert run_cli(count_runs, [str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert run_cli(count_runs, []) == 2


def test_a_registered_module_that_is_not_an_algorithm_is_named_with_what_it_lacks(
    toy_algorithm, monkeypatch, tmp_path, capsys
):
    import dataclasses

    monkeypatch.setitem(ALGORITHMS, "toy", dataclasses.replace(toy_algorithm, module="json"))
    assert run_cli(custom_train.main, ["--algo", "toy", "--env", "UAVGrid-v0", "--log-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "error: algorithm 'toy': its module json lacks Agent, learn, settings (or Config) "
        "(agents.session.contract.AlgorithmModule)\n"
    )
    assert not any(tmp_path.iterdir())


def test_a_new_benchmark_is_its_module_an_entry_and_a_block_in_its_study_page(monkeypatch, tmp_path, capsys):
    """Recipe "add a benchmark": its module (recipes/toy_benchmark.py) and one entry in
    ``benchmarks/__main__.py``'s table; ``python -m benchmarks`` then writes its table, with the
    command and the machine, into the study page that holds its block, and the rest of the page stays."""
    import toy_benchmark

    import benchmarks.__main__ as runner

    monkeypatch.setitem(sys.modules, "benchmarks.toy_benchmark", toy_benchmark)  # as benchmarks/toy_benchmark.py would be
    monkeypatch.setitem(runner.BENCHMARKS, "toy_benchmark", (["--rounds", "3", "--size", "1000"], ["--rounds", "1"]))
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n")
    (tmp_path / "studies").mkdir()
    study = tmp_path / "studies" / "2026-12-07-toy.md"
    block = "<!-- results:toy_benchmark -->\n<!-- /results:toy_benchmark -->"
    study.write_text(f"# Toy\n\nWhy we measured it.\n\n{block}\n\nWhat it means.\n")
    assert set(runner.main(["--only", "toy_benchmark", "--results", str(results)])) == {"toy_benchmark"}
    text = study.read_text()
    assert "`python -m benchmarks.toy_benchmark --rounds 3 --size 1000` on" in text
    assert "| a sum of 1000 numbers |" in text and text.startswith("# Toy\n\nWhy") and text.endswith("What it means.\n")
    assert (tmp_path / "toy_benchmark.json").is_file() and results.read_text() == "# Results\n"
    assert run_cli(toy_benchmark.main, ["--rounds", "0"]) == 2  # counts out of range: one line, exit 2
    assert "--rounds must be in 1..100000, got 0" in capsys.readouterr().err
