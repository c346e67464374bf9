"""agents.tune: search spaces, trials that report and get pruned, workers sharing a journal file or
PostgreSQL, the heartbeat, the report, seed sweeps drawn by agents.compare, and the RL Zoo's own search."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

optuna = pytest.importorskip("optuna")

from agents import compare, tune  # noqa: E402
from agents.common.configuration.config import ConfigError  # noqa: E402
from agents.common.configuration.registry import ALGORITHMS  # noqa: E402
from agents.session.cli import run_cli  # noqa: E402
from agents.studies import tuning  # noqa: E402
from agents.studies.storage import open_storage  # noqa: E402
from agents.trainer import run as trainer  # noqa: E402
from tests.helpers import REPO, tiny_run  # noqa: E402

POSTGRES = os.environ.get("BALLENVS_TEST_POSTGRES")
needs_postgres = pytest.mark.skipif(
    not POSTGRES, reason="BALLENVS_TEST_POSTGRES is not set: no PostgreSQL server for this run (.ci/run starts one)"
)

SPACE = {
    "learning_rate": {"type": "float", "low": 1.0e-4, "high": 1.0e-3, "log": True, "schedule": "linear"},
    "gamma": {"type": "categorical", "choices": [0.9, 0.99]},
}
TINY = ["--env", "UAVGrid-v0", *tiny_run(), "--algo", "custom"]
TINY += ["--hyperparams", "learning_starts=100", "buffer_size=1000", "--env-kwargs", "max_episode_steps=50"]


@pytest.fixture
def space_file(tmp_path):
    path = tmp_path / "space.yml"
    path.write_text(yaml.safe_dump(SPACE))
    return path


def tiny(tmp_path, space_file, *extra):
    return [*TINY, "--log-dir", str(tmp_path / "tune"), "--search-space", str(space_file), *extra]


def load(tmp_path, name="UAVGrid-v0-custom", storage=None):
    return optuna.load_study(study_name=name, storage=open_storage(storage, tmp_path / "tune" / name, 30))


def test_search_spaces_sample_valid_values_and_bad_ones_are_refused():
    algo = ALGORITHMS["custom"]
    space = tuning.SearchSpace(SPACE, algo, "test")
    study = optuna.create_study()
    for _ in range(20):
        params = space.sample(study.ask())
        assert params["learning_rate"].startswith("lin_") and 1e-4 <= float(params["learning_rate"][4:]) <= 1e-3
        assert params["gamma"] in (0.9, 0.99)
    for bad, message in [
        ({"lr": {"type": "float", "low": 0.1, "high": 0.2}}, "'lr' is not a custom hyperparameter"),
        ({"gamma": {"type": "categorical", "choices": [0.9, 1.5]}}, r"gamma=1.5 must be a number in \[0, 1\]"),
        (
            {"learning_rate": {"type": "float", "low": 0.0, "high": 0.1, "log": True}},
            "must start above 0|learning_rate=0.0 must be",
        ),
        ({"batch_size": {"type": "int", "low": 8}}, "is not {type: float|int, low, high"),
        ({"n_epochs": {"type": "int", "low": 1, "high": 3}}, "'n_epochs' is not a custom hyperparameter"),
        ({"train_freq": {"type": "int", "low": 1, "high": 10**30}}, "integers below 2"),  # no float holds it exactly
    ]:
        with pytest.raises(ConfigError, match=message):
            tuning.SearchSpace(bad, algo, "test")
    for name in ("dqn", "custom", "pqn"):  # the shipped spaces are valid
        tuning.SearchSpace(tuning.load_space(ALGORITHMS[name], None)[0], ALGORITHMS[name], name)


def test_a_trial_reports_every_evaluation_and_is_pruned_when_the_pruner_says(tmp_path, space_file):
    class AlwaysPrune(optuna.pruners.BasePruner):
        def prune(self, study, trial):
            return True

    args = tune.parse(tiny(tmp_path, space_file))
    plan = {
        "env": "UAVGrid-v0", "algo": "custom", "timesteps": 400, "eval_freq": 200, "eval_episodes": 2, "device": "cpu",
        "threads": "1",
        "extra": ["--n-envs", "2", "--env-kwargs", "max_episode_steps=50"], "hyperparams": list(args.hyperparams),
        "study_dir": str(tmp_path / "study"),
    }  # fmt: skip
    study = optuna.create_study(direction="maximize", pruner=AlwaysPrune())
    trial = study.ask()
    with pytest.raises(optuna.TrialPruned, match="pruned at 200 steps"):
        tuning.run_trial(trial, plan, {"gamma": 0.9}, 0, prune=True, train=trainer.main)
    assert list(trial.storage.get_trial(trial._trial_id).intermediate_values) == [200]
    assert (tmp_path / "study" / "trial_0" / "output.log").is_file()
    study = optuna.create_study(direction="maximize")
    trial = study.ask()
    value = tuning.run_trial(trial, plan, {"gamma": 0.9}, 0, prune=False, train=trainer.main)
    assert isinstance(value, float) and Path(trial.user_attrs["run_dir"]).is_dir()
    assert sorted(trial.storage.get_trial(trial._trial_id).intermediate_values) == [200, 400]


def test_a_trial_shows_a_line_now_and_then_while_it_runs_and_no_progress_silences_it(
    tmp_path, space_file, monkeypatch, capsys
):
    monkeypatch.setattr(tuning, "PLAIN_EVERY_S", 0.001)  # a line at every look, for a trial of a second
    lines = re.compile(r"^\[worker 0\] trial 0: \d+ s in, last evaluation (none yet|[-\d.]+ at [\d,]+ steps)$", re.M)
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--trials", "1")) == 0
    shown = capsys.readouterr()
    assert lines.search(shown.err) and not lines.search(shown.out), shown  # progress on stderr, results on stdout
    assert "[worker 0] trial 0: complete" in shown.out
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--trials", "1", "--no-progress", "--workers", "100000")) == 0
    out, err = capsys.readouterr()
    assert "1 more, on 1 worker(s) (--workers 100000: one a trial)" in err
    assert not re.search(r"^\[worker 0\] trial 1: \d+ s in", out, re.M)
    assert "[worker 0] trial 1: complete" in out


@pytest.mark.slow  # a study's trials
def test_two_workers_share_a_journal_file_and_rerunning_continues_the_study(tmp_path, space_file, capsys):
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--trials", "4", "--workers", "2", "--seed", "1")) == 0
    study = load(tmp_path)
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(complete) == 4 and len({t.number for t in complete}) == 4
    assert len({t.user_attrs["worker"] for t in complete}) == 2, "both workers ran trials"
    assert all(Path(t.user_attrs["run_dir"]).is_dir() for t in complete)
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--trials", "1", "--max-total-trials", "6")) == 0
    assert len(load(tmp_path).trials) == 5
    other = tiny(tmp_path, space_file, "--trials", "1")
    other[other.index("400")] = "600"
    assert run_cli(tune.main, other) == 2
    assert "ran with other timesteps; use another --study-name" in capsys.readouterr().err


@pytest.mark.slow  # a study's trials
def test_a_worker_killed_mid_trial_leaves_it_failed_and_the_study_goes_on(tmp_path, space_file):
    run_killed_worker(tmp_path, space_file, None)


@pytest.mark.slow
@needs_postgres
def test_two_workers_share_postgresql(tmp_path, space_file):
    name = f"pg-share-{os.getpid()}"
    argv = tiny(tmp_path, space_file, "--trials", "4", "--workers", "2", "--storage", POSTGRES, "--study-name", name)
    assert run_cli(tune.main, argv) == 0
    study = load(tmp_path, name, POSTGRES)
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(complete) == 4 and len({t.user_attrs["worker"] for t in complete}) == 2


@pytest.mark.slow
@needs_postgres
def test_the_heartbeat_fails_the_trial_of_a_worker_killed_mid_trial(tmp_path, space_file):
    run_killed_worker(tmp_path, space_file, POSTGRES)


def run_killed_worker(tmp_path, space_file, storage):
    """A worker SIGKILLed mid-trial: its trial is failed (by the heartbeat with PostgreSQL, by the
    next command on this machine with a journal file) and the study goes on."""
    name = f"killed-{os.getpid()}-{'pg' if storage else 'journal'}"
    argv = tiny(
        tmp_path,
        space_file,
        "--trials",
        "1",
        "--study-name",
        name,
        "--heartbeat",
        "1",
        *(["--storage", storage] if storage else []),
    )
    # A study keeps its budget, so the trial after the kill costs as much: seconds, enough to kill it in.
    argv[argv.index("400")], argv[argv.index("200")] = "3000", "1500"
    worker = subprocess.Popen([sys.executable, "-m", "agents.tune", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline, running = time.time() + 120, False
    while not running and time.time() < deadline:
        time.sleep(0.2)
        try:
            trials = load(tmp_path, name, storage).trials
        except (KeyError, ValueError):
            continue
        running = bool(trials) and trials[0].state == optuna.trial.TrialState.RUNNING and "worker" in trials[0].user_attrs
    assert running, "the worker started its trial"
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    time.sleep(3)  # past the heartbeat's grace period (two heartbeats)
    assert run_cli(tune.main, argv) == 0
    states = [t.state for t in load(tmp_path, name, storage).trials]
    assert states == [optuna.trial.TrialState.FAIL, optuna.trial.TrialState.COMPLETE], states


@pytest.mark.slow  # a study's trials
def test_report_writes_the_table_plots_and_a_ready_section(tmp_path, space_file, capsys):
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--trials", "3")) == 0
    assert run_cli(tune.main, [*tiny(tmp_path, space_file), "--report"]) == 0
    folder = tmp_path / "tune" / "UAVGrid-v0-custom" / "report"
    text = (folder / "report.md").read_text()
    assert "# Study UAVGrid-v0-custom" in text and "| trial | value" in text
    section = yaml.safe_load((folder / "best.yml").read_text())
    assert section["UAVGrid-v0"]["policy"] == "MultiInputPolicy" and section["UAVGrid-v0"]["learning_rate"].startswith("lin_")
    for name in ("history.png", "parallel.png"):
        assert (folder / name).stat().st_size > 1000, name


@pytest.mark.slow  # a study's trials
def test_seed_sweeps_run_one_configuration_and_compare_draws_them(tmp_path, space_file, capsys):
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--trials", "1")) == 0
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--seeds", "2", "--from-trial", "0")) == 0
    sweep = load(tmp_path, "UAVGrid-v0-custom-seeds-0")
    assert sorted(t.user_attrs["seed"] for t in sweep.trials) == [0, 1]
    assert all(t.params == {} for t in sweep.trials), "the same configuration, not samples"
    argv = [
        "--from-study",
        "UAVGrid-v0-custom-seeds-0",
        "--tune-dir",
        str(tmp_path / "tune"),
        "--log-dir",
        str(tmp_path),
        "--score-episodes",
        "2",
    ]
    assert run_cli(compare.main, argv) == 0
    report = (next((tmp_path / "compare").iterdir()) / "report.md").read_text()
    assert "| UAVGrid-v0-custom-seeds-0 |" in report and "(2/2 seeds)" in report or "not reached" in report
    for key, value, message in (("env", "Nope-v0", "ran on 'Nope-v0', none of the envs"), ("timesteps", -5, "timesteps")):
        kept = sweep.user_attrs[key]
        sweep.set_user_attr(key, value)  # a study another tool wrote, or one tampered with
        assert run_cli(compare.main, argv) == 2 and message in capsys.readouterr().err
        sweep.set_user_attr(key, kept)
    (Path(sweep.trials[0].user_attrs["run_dir"]) / "summary.yml").unlink()  # a run that did not finish
    before = set((tmp_path / "compare").iterdir())
    assert run_cli(compare.main, argv) == 2
    assert set((tmp_path / "compare").iterdir()) == before, "a refused comparison leaves no folder"
    assert run_cli(tune.main, tiny(tmp_path, space_file, "--seeds", "2", "--from-trial", "9")) == 2


@pytest.mark.slow  # a study's trials
def test_bad_tune_input_is_one_line(tmp_path, space_file, capsys):
    for argv, message in [
        (["--trials", "0"], "--trials must be >= 1"),
        (["--storage", "sqlite:///x.db"], "SQLite does not take several writers"),
        (["--seeds", "2"], "--seeds needs one of --from-trial N or --params FILE"),
        (["--eval-freq", "1000"], "past the budget"),
        (["--hyperparams", "exploration_final_eps=2"], "exploration_final_eps=2 must be a number in [0, 1]"),
        (["--hyperparams", "gamma=0.9"], "--hyperparams fixes gamma, which the search space"),
    ]:
        assert run_cli(tune.main, tiny(tmp_path, space_file, *argv)) == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--trainer", "custom"], "--trainer is now called --algo: --algo custom"),
        (["--algo", "ppo"], "--algo ppo: zoo_configs/search.yml has no search space for it (it has dqn, custom, pqn)"),
        (["--algo", "finetune"], "--algo finetune: zoo_configs/search.yml has no search space for it"),
    ],
)
def test_the_old_flag_and_an_algorithm_without_a_search_space_are_one_line_and_write_nothing(tmp_path, capsys, argv, message):
    assert run_cli(tune.main, [*argv, "--trials", "1", "--timesteps", "100", "--log-dir", str(tmp_path / "tune")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "tune").exists()


@pytest.mark.slow  # a study's trials
def test_a_missing_study_is_refused_and_nothing_is_written(tmp_path, capsys):
    tune_dir = tmp_path / "tune"
    commands = [
        (tune.main, ["--report", "--study-name", "nosuch", "--log-dir", str(tune_dir)]),
        (tune.main, ["--seeds", "2", "--from-trial", "0", "--study-name", "nosuch", "--log-dir", str(tune_dir)]),
        (compare.main, ["--from-study", "nosuch", "--tune-dir", str(tune_dir), "--log-dir", str(tmp_path / "out")]),
    ]
    for main, argv in commands:
        assert run_cli(main, argv) == 2, argv
        assert f"no study 'nosuch' in {tune_dir / 'nosuch' / 'journal.log'}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # the zoo's own study
def test_the_rl_zoos_own_search_runs_on_our_envs(tmp_path):
    command = [
        sys.executable, "-m", "rl_zoo3.train", "--algo", "dqn", "--env", "UAVGrid-v0", "--gym-packages", "ballenvs",
        "-conf", str(REPO / "zoo_configs" / "dqn.yml"), "-optimize", "--n-trials", "2", "--n-jobs", "1", "-n", "600",
        "--n-evaluations", "1", "--eval-episodes", "1", "--sampler", "random", "--pruner", "none", "--device", "cpu",
        "--storage", str(tmp_path / "zoo.log"), "--study-name", "zoo-test", "-f", str(tmp_path),
        "-params", "learning_starts:100",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    study = optuna.load_study(
        study_name="zoo-test",
        storage=optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(tmp_path / "zoo.log"))),
    )
    assert len([t for t in study.trials if t.state.is_finished()]) == 2
