"""agents.record: games of any player written as a Minari dataset, read back with their env."""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

from agents import record
from agents.session.cli import run_cli
from agents.studies.datasets import load_dataset
from tests.helpers import refused

STATE = ["--env-kwargs", "obs_type=state"]


def test_a_dataset_round_trips_with_its_spaces_episodes_infos_and_env(tmp_path, capsys):
    argv = ["pusher", "--opponent", "chaser", "--episodes", "12", "--seed", "5", *STATE, "--data-path", str(tmp_path)]
    assert run_cli(record.main, argv) == 0
    assert "wrote" in capsys.readouterr().out and not list(tmp_path.glob(".recording-*")), "no scratch left behind"
    dataset = load_dataset(tmp_path, "ballenvs/ballsumo-pusher-v0")
    assert dataset.total_episodes == 12
    env = dataset.recover_environment()
    assert env.spec.id == "BallSumo-v0" and env.spec.kwargs["opponent"] == "chaser"
    assert dataset.observation_space == env.observation_space and dataset.action_space == env.action_space
    episodes = list(dataset.iterate_episodes())
    assert dataset.total_steps == sum(len(e.actions) for e in episodes)
    for k, episode in enumerate(episodes):
        assert len(episode.observations) == len(episode.actions) + 1 == len(episode.infos["winner"])
        assert episode.terminations[-1] or episode.truncations[-1]
        assert not (episode.terminations[:-1].any() or episode.truncations[:-1].any())
        first, _ = env.reset(seed=5 + k)
        assert np.array_equal(first, episode.observations[0]), "episode k is the env's game of seed + k"
    winners = collections.Counter(bytes(e.infos["winner"][-1]) for e in episodes)
    assert set(winners) <= {b"left", b"right", b"draw"} and winners[b"left"] > winners[b"right"], "pusher beats chaser"
    assert all(e.infos["winner"][0] == b"" for e in episodes), "no winner at the reset"


def test_the_env_replays_a_recorded_episode_step_for_step(tmp_path):
    assert run_cli(record.main, ["chaser", "--episodes", "2", *STATE, "--data-path", str(tmp_path)]) == 0
    episode = next(load_dataset(tmp_path, "ballenvs/ballsumo-chaser-v0").iterate_episodes())
    env = load_dataset(tmp_path, "ballenvs/ballsumo-chaser-v0").recover_environment()
    env.reset(seed=0)
    for action, observation, reward in zip(episode.actions, episode.observations[1:], episode.rewards):
        step = env.step(int(action))
        assert np.array_equal(step[0], observation) and step[1] == reward


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "BallSumo-v0"])
@pytest.mark.parametrize(
    "options", [[], ["obs_type=state"], ["obs_size=36", "subpixel=true"]], ids=["pixels (the default)", "state", "sub-pixel"]
)
def test_every_observation_records_and_replays_bit_for_bit(env_id, options, tmp_path):
    """Pixels too, as they are (no lossy image encoding): the recovered env replays every frame."""
    argv = ["pusher", "--env", env_id, "--episodes", "2", "--data-path", str(tmp_path), "--dataset-id", "test/games-v0"]
    assert run_cli(record.main, [*argv, *(["--env-kwargs", *options] if options else [])]) == 0
    dataset = load_dataset(tmp_path, "test/games-v0")
    env = dataset.recover_environment()
    assert dataset.observation_space == env.observation_space
    for k, episode in enumerate(dataset.iterate_episodes()):
        first, _ = env.reset(seed=k)
        assert episode.observations.dtype == first.dtype and np.array_equal(first, episode.observations[0])
        for action, observation in zip(episode.actions[:50], episode.observations[1:]):
            assert np.array_equal(env.step(int(action))[0], observation)


@pytest.mark.slow
def test_a_thousand_games_record_and_reload(tmp_path):
    argv = ["sprinter", "--opponent", "pusher", "--episodes", "1000", *STATE, "--data-path", str(tmp_path)]
    assert run_cli(record.main, argv) == 0
    dataset = load_dataset(tmp_path, "ballenvs/ballsumo-sprinter-v0")
    assert dataset.total_episodes == 1000 and len(list(dataset.iterate_episodes())) == 1000


@pytest.mark.slow
def test_planner_games_record_and_reload(tmp_path):
    argv = ["planner", "--episodes", "6", *STATE, "--data-path", str(tmp_path), "--dataset-id", "me/planner-games-v2"]
    assert run_cli(record.main, argv) == 0
    assert load_dataset(tmp_path, "me/planner-games-v2").total_episodes == 6


@pytest.mark.parametrize(
    "argv,message",
    [
        (["chaser", "--env", "UAVGrid-v0"], "UAVGrid-v0 is a one-player game; two-player envs: BallDuel-v0, BallSumo-v0"),
        (["chaser", "--env", "Nope-v0"], "unknown env 'Nope-v0'"),
        (["bully"], "player 'bully': not a built-in player"),
        (["chaser", "--opponent", "runs/x.pt"], r"--opponent 'runs/x\.pt': the dataset's env spec must rebuild its opponent"),
        (["chaser", "--episodes", "0"], r"--episodes must be in 1\.\.1,000,000, got 0"),
        (["chaser", "--seed", "-1"], r"--seed must be in 0\.\."),
        (["chaser", "--dataset-id", "no-version"], "--dataset-id 'no-version' is not Minari's namespace/name-v<version>"),
        (["chaser", "--dataset-id", "../../x-v0"], "is not Minari's namespace/name-v<version>"),
        (["chaser", "--dataset-id", "../x-v0"], "'../x-v0': its namespace and name must hold a letter or digit"),
        (["chaser", "--dataset-id", "me/..-v0"], "'me/..-v0': its namespace and name must hold a letter or digit"),
        (["chaser", "--seed", "4294967295", "--episodes", "2"], r"--seed must be in 0\.\.4294967294, got 4294967295"),
        (["chaser", "--env-kwargs", "obs_size=3"], "obs_size must be an int in"),
        (["chaser", "--env-kwargs", "obs_type=state", "subpixel=true"], "subpixel=True applies to obs_type='pixels' only"),
        # Empty values are refused, not read as the flag left out:
        (["chaser", "--opponent", ""], "--opponent '': the dataset's env spec must rebuild its opponent"),
        (["chaser", "--dataset-id", ""], "--dataset-id '' is not Minari's namespace/name-v<version>"),
    ],
)
def test_bad_input_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, argv, message):
    err = refused(capsys, record.main, [*argv, "--data-path", str(tmp_path / "data")])
    assert re.search(message, err), err
    assert not (tmp_path / "data").exists()


def test_an_empty_data_path_is_refused_rather_than_written_into_the_working_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = refused(capsys, record.main, ["chaser", "--data-path", ""])
    assert "--data-path '': name the folder datasets go in" in err and not list(tmp_path.iterdir())


def test_a_data_path_that_is_or_lies_under_a_file_is_refused_before_any_game(tmp_path, capsys):
    file = tmp_path / "file"
    file.write_text("")
    for data_path in (file, file / "under"):
        err = refused(capsys, record.main, ["chaser", "--episodes", "1", "--data-path", str(data_path)])
        assert f"'{file}' is a file, not a folder" in err


def test_the_last_valid_seed_records_its_games(tmp_path):
    argv = ["chaser", "--seed", "4294967294", "--episodes", "2", *STATE, "--data-path", str(tmp_path)]
    assert run_cli(record.main, argv) == 0
    assert load_dataset(tmp_path, "ballenvs/ballsumo-chaser-v0").total_episodes == 2


def test_an_existing_dataset_is_not_replaced(tmp_path, capsys):
    argv = ["chaser", "--episodes", "1", *STATE, "--data-path", str(tmp_path)]
    assert run_cli(record.main, argv) == 0
    written = sorted(p.stat().st_mtime_ns for p in tmp_path.rglob("*.hdf5"))
    capsys.readouterr()
    err = refused(capsys, record.main, argv)
    assert "dataset 'ballenvs/ballsumo-chaser-v0' already exists" in err
    assert sorted(p.stat().st_mtime_ns for p in tmp_path.rglob("*.hdf5")) == written


def test_the_opponent_may_be_named_in_the_env_kwargs_and_the_dataset_says_it(tmp_path, capsys):
    argv = ["chaser", "--episodes", "2", "--env-kwargs", "obs_type=state", "opponent=pusher", "--data-path", str(tmp_path)]
    assert run_cli(record.main, argv) == 0
    dataset = load_dataset(tmp_path, "ballenvs/ballsumo-chaser-v0")
    assert dataset.recover_environment().spec.kwargs["opponent"] == "pusher"
    capsys.readouterr()
    argv = ["chaser", "--opponent", "chaser", "--env-kwargs", "opponent=pusher", "--data-path", str(tmp_path / "data")]
    assert "--opponent 'chaser' and --env-kwargs opponent='pusher' disagree" in refused(capsys, record.main, argv)
    assert not (tmp_path / "data").exists()


def test_a_data_path_where_no_folder_can_be_made_is_refused_before_any_game(capsys):
    err = refused(capsys, record.main, ["chaser", "--episodes", "1", "--data-path", "/proc/ballenvs/datasets"])
    assert "--data-path '/proc/ballenvs/datasets': cannot make a folder in '/proc'" in err


def test_a_model_is_recorded_only_in_the_game_it_learned(tmp_path, capsys):
    from agents import train

    argv = ["--algo", "custom", "--env", "BallSumo-v0", "--n-envs", "2", "--timesteps", "100", "--eval-freq", "0"]
    argv += ["--no-progress", "--threads", "1", "--log-dir", str(tmp_path), "--hyperparams", "buffer_size=200"]
    assert run_cli(train.main, [*argv, "learning_starts=50"]) == 0
    capsys.readouterr()
    run = tmp_path / "custom" / "BallSumo-v0_1"
    err = refused(capsys, record.main, [str(run), "--env", "BallDuel-v0", "--data-path", str(tmp_path / "data")])
    assert "a model of BallSumo-v0, not BallDuel-v0: record it with --env BallSumo-v0" in err
    assert not (tmp_path / "data").exists()
