"""Benchmarks in --quick mode: they run, write JSON that parses, and render their tables.
Speed is not asserted here: figures live in benchmarks/RESULTS.md."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

import benchmarks.__main__ as runner
from tests.helpers import REPO


@pytest.mark.slow
def test_quick_pass_writes_every_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    results_md = tmp_path / "RESULTS.md"
    results_md.write_text("# notes\n")
    results = runner.main(["--quick", "--results", str(results_md)])
    assert set(results) == set(runner.BENCHMARKS)
    for name in runner.BENCHMARKS:
        payload = json.loads((tmp_path / f"{name}.json").read_text())
        assert payload["benchmark"] == name and payload["machine"]
    assert results_md.read_text() == "# notes\n", "--quick leaves RESULTS.md alone"
    out = capsys.readouterr().out
    assert "| CartPole-v1 | " in out and "| per sample: predict, predict, fit" in out and "anti-pattern" in out
    flat = results["episode_flatness"]
    assert flat["ours"]["episodes"] == 3 and flat["anti_pattern"]["episodes"] == 2


def test_train_throughput_times_our_dqn_with_sb3s_targets_when_asked(tmp_path, monkeypatch):
    from benchmarks import train_throughput

    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    quick = ["--steps", "64", "--rounds", "1", "--learning-starts", "64", "--envs", "UAVGrid-v0", "--vec-envs", "dummy"]
    result = train_throughput.main([*quick, "--plain-targets"])
    assert result["custom_overrides"] == {"learning_starts": 64, "double_q": False}
    assert result["rows"][0]["custom_steps_per_s"] > 0
    assert json.loads((tmp_path / "train_throughput.json").read_text())["custom_overrides"]["double_q"] is False


def test_results_update_replaces_only_the_marked_block(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# R\n\n## a\n\n<!-- results:a -->\nold\n<!-- /results:a -->\n\nhand-written note\n")
    runner.update_results(path, "a", "new table")
    runner.update_results(path, "b", "other")
    text = path.read_text()
    assert "old" not in text and "<!-- results:a -->\nnew table\n<!-- /results:a -->" in text
    assert "hand-written note" in text and "## b\n\n<!-- results:b -->\nother\n<!-- /results:b -->" in text


@pytest.mark.slow
def test_the_gpu_benchmark_runs_its_quick_pass_on_the_cpu(tmp_path, monkeypatch, capsys):
    from benchmarks import gpu

    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    results_md = tmp_path / "RESULTS.md"
    result = gpu.main(["--quick", "--device", "cpu", "--results", str(results_md)])
    assert result["device"] == "cpu"
    rows = {(r["env"], r["trainer"]): r for r in result["throughput"]}
    for env_id in gpu.ENVS:
        for trainer in ("SB3 DQN", "custom", "PQN (its config)"):
            assert rows[env_id, trainer]["steps_per_s"] > 0, (env_id, trainer)
        assert rows[env_id, "custom --compile"]["steps_per_s"] is None, "CUDA only: not measured on a CPU"
    assert [r["trainer"] for r in result["skill"]] == list(gpu.SKILL_RUNS)
    assert json.loads((tmp_path / "gpu.json").read_text())["benchmark"] == "gpu"
    assert not results_md.exists(), "--quick leaves RESULTS.md alone"
    assert "n/a (CUDA only)" in capsys.readouterr().out


def test_eval_curves_draws_each_runs_win_rates_and_names_a_missing_metric(tmp_path, capsys):
    from agents.session.cli import run_cli
    from benchmarks.eval_curves import main as curves_main
    from benchmarks.eval_curves import read_curve

    run = tmp_path / "run"
    run.mkdir()
    config = "algo: dqn\nenv_id: BallDuel-v0\nseed: 3\nvec_env: native\ntimesteps: 300\nhyperparams: {policy: CnnPolicy}\n"
    (run / "config.yml").write_text(config)
    rows = ["time/total_timesteps,rollout/ep_rew_mean,eval/win_rate", "100,0.1,", "200,0.2,0.5", "300,0.3,0.9"]
    (run / "progress.csv").write_text("\n".join(rows) + "\n")
    steps, wins = read_curve(run, "eval/win_rate")
    assert steps.tolist() == [200.0, 300.0] and wins.tolist() == [0.5, 0.9], "the rows with an evaluation"
    assert run_cli(curves_main, [str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    assert run_cli(curves_main, [str(run), "--metric", "eval/win_rate_vs_pusher", "--out", str(tmp_path / "d.png")]) == 2
    assert "no 'eval/win_rate_vs_pusher' in its progress.csv" in capsys.readouterr().err
    assert not (tmp_path / "d.png").exists()
    assert run_cli(curves_main, [str(run), str(run), "--labels", "one", "--out", str(tmp_path / "e.png")]) == 2
    assert "--labels: 1 labels for 2 runs; give one per run" in capsys.readouterr().err
    assert run_cli(curves_main, [str(run), "--labels", "mine", "--out", str(tmp_path / "e.png")]) == 0


@pytest.mark.slow
def test_the_docs_figures_are_drawn_by_the_documented_commands_and_shown_in_the_docs(tmp_path, capsys):
    from benchmarks import docs_figures

    argv = [
        "--out",
        str(tmp_path),
        "--timesteps",
        "6000",
        "--seeds",
        "1",
        "--games",
        "2",
        "--no-progress",
    ]  # past learning_starts
    written = docs_figures.main([*argv, "--probe-games", "5", "--probe-epochs", "1", "--probe-sizes", "36"])
    assert sorted(path.name for path in written) == [
        "example_curves.png",
        "example_elo.png",
        "example_probe.png",
        "example_profiles.png",
    ]
    assert all(path.stat().st_size > 10_000 for path in written)
    pages = (REPO / "docs" / "evaluating.md").read_text() + (REPO / "docs" / "two-players.md").read_text()
    for path in written:  # each shown, and the shipped one is there to show
        assert f"benchmarks/figures/{path.name}" in pages and (REPO / "benchmarks" / "figures" / path.name).is_file()


def test_the_docs_figures_refuse_an_out_folder_they_cannot_write_before_any_work(tmp_path, capsys):
    from benchmarks import docs_figures
    from tests.helpers import refused

    taken = tmp_path / "example_elo.png"
    taken.mkdir()  # a folder where a figure goes: never replaced
    err = refused(capsys, docs_figures.main, ["--out", str(tmp_path), "--only", "league", "--no-progress"])
    assert f"--out {str(taken)!r} exists and is not a regular file" in err
    err = refused(capsys, docs_figures.main, ["--out", "/proc", "--only", "compare", "--no-progress"])
    assert "--out '/proc/example_curves.png': cannot write in '/proc'" in err


def test_time_to_skill_is_the_first_evaluation_past_the_threshold_against_every_opponent():
    from benchmarks.time_to_skill import median_seconds, skill

    def evaluation(seconds, reward, **rates):
        return {"steps": 100 * seconds, "seconds": seconds, "mean_reward": reward, "win_rates": rates}

    evals = [
        evaluation(10, 0.1, chaser=0.95, anchor=0.5),
        evaluation(20, 0.8, chaser=0.92, anchor=0.9),  # the first at 90% against both
        evaluation(25, 0.9, chaser=0.9, anchor=0.92),  # the best model: as good at its worst, later
        evaluation(30, 0.95, chaser=1.0, anchor=0.8),  # the best return, but 80% against anchor
    ]
    found = skill(evals, 0.9)
    assert (found["seconds"], found["steps"], found["final_holds"]) == (20, 2000, False)
    assert found["best_final_gap"] == pytest.approx(12) and found["wall"] == 30
    assert skill(evals[:1], 0.9)["seconds"] is None
    assert median_seconds([{"seconds": 20}, {"seconds": None}, {"seconds": 40}]) == 40


def test_the_planners_level_is_a_lower_rate_against_the_level_players_and_the_threshold_against_the_rest():
    from benchmarks.time_to_skill import skill

    def evaluation(seconds, **rates):
        return {"steps": seconds, "seconds": seconds, "mean_reward": 0.0, "win_rates": rates}

    evals = [
        evaluation(10, chaser=0.95, champion=0.2),
        evaluation(20, chaser=0.85, champion=0.5),  # level with the champion, but not past chaser
        evaluation(30, chaser=0.9, champion=0.4),  # the first at the level
        evaluation(40, chaser=0.95, champion=0.35),  # the final model fell below it
    ]
    found = skill(evals, 0.9, levels={"champion": 0.4})
    assert (found["seconds"], found["final_holds"]) == (30, False)
    assert skill(evals, 0.9)["seconds"] is None, "without the level, 90% against the champion too"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--learners", "finetune"], "--learners finetune: start_from: name the model file"),
        (["--learners", "custom", "--env", "BallDuel-v0"], "--learners custom: its BallDuel-v0 section does not train by"),
        (["--learners", "custom", "--log-dir", ""], "--log-dir '': name a folder"),
        (["--learners", "custom", "--level-vs", "nobody"], "--level-vs 'nobody': not a built-in player of BallSumo-v0"),
        (["--learners", "custom", "--level-vs", "chaser"], "--level-vs 'chaser' is also in --opponents"),
        (["--learners", "custom", "--level", "0"], "--level must be in (0, 1], got 0.0"),
        (["--learners", "custom", "custom"], "--learners must differ; named twice: ['custom']"),
        (["--learners", "custom", "--seeds", "0", "1", "0"], "--seeds must differ; named twice: ['0']"),
    ],
)
def test_time_to_skill_refuses_a_run_it_cannot_judge_before_starting_any(tmp_path, monkeypatch, capsys, argv, message):
    from benchmarks import time_to_skill
    from tests.helpers import refused

    def no_run(*args):
        raise AssertionError("a run started")

    monkeypatch.setattr(time_to_skill, "train_once", no_run)
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert message in refused(capsys, time_to_skill.main, [*argv, "--no-progress"])
    assert not list(tmp_path.iterdir())


@pytest.mark.slow  # two short training runs in processes of their own
def test_time_to_skill_runs_each_learner_and_writes_its_evaluations(tmp_path, monkeypatch, capsys):
    from benchmarks import time_to_skill

    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    argv = ["--learners", "custom", "--seeds", "0", "1", "--timesteps", "1000", "--eval-freq", "500"]
    argv += ["--hyperparams", "learning_starts=200"]  # a run that would end before its first update is refused
    argv += ["--eval-episodes", "2", "--plot", str(tmp_path / "t.png"), "--log-dir", str(tmp_path / "runs"), "--no-progress"]
    payload = time_to_skill.main(argv)
    kept = tmp_path / "runs" / "time_to_skill"
    assert sorted(path.name for path in kept.iterdir()) == ["custom_0", "custom_1"]
    assert (kept / "custom_1" / "custom" / "BallSumo-v0_1" / "final_model.pt").is_file()
    assert [r["seed"] for r in payload["results"]["custom"]] == [0, 1]
    assert [e["steps"] for e in payload["evaluations"]["custom"][0]] == [512, 1008]  # on the 16 envs' vector steps
    assert set(payload["evaluations"]["custom"][0][0]["win_rates"]) == {
        "chaser",
        "pusher",
        "anchor",
        "sprinter",
        "dqn_champion",
    }
    assert (tmp_path / "time_to_skill.json").is_file() and (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    assert "| custom | 1 |" in capsys.readouterr().out


@pytest.mark.slow  # a training run in a process of its own, stopped at its first evaluation
def test_time_to_skill_until_skilled_stops_a_run_at_skill_and_judges_no_final_model(tmp_path, monkeypatch, capsys):
    from benchmarks import time_to_skill

    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    # Skilled at its first evaluation whatever it won: the run must be stopped there, long before its end.
    skilled_yet = time_to_skill.skilled_yet

    def at_any_win_rate(runs, args):
        return skilled_yet(runs, Namespace(**{**vars(args), "threshold": 0}))

    monkeypatch.setattr(time_to_skill, "skilled_yet", at_any_win_rate)
    argv = ["--learners", "custom", "--seeds", "3", "--timesteps", "1000000", "--eval-freq", "500"]
    argv += ["--eval-episodes", "2", "--until-skilled", "--log-dir", str(tmp_path / "runs"), "--no-progress"]
    payload = time_to_skill.main(argv)
    [result] = payload["results"]["custom"]
    assert result["final_holds"] is None and result["best_final_gap"] is None
    assert payload["evaluations"]["custom"][0][-1]["steps"] < 1_000_000
    [run] = (tmp_path / "runs" / "time_to_skill" / "custom_3" / "custom").iterdir()
    assert (run / "interrupted_model.pt").is_file() and not (run / "final_model.pt").exists()
    assert payload["until_skilled"] and payload["complete"]
    assert "| stopped at skill | - |" in capsys.readouterr().out


def test_time_to_skill_takes_a_run_stopped_at_skill_as_it_closes_and_no_other_failure():
    from benchmarks.time_to_skill import ended_as_asked

    assert ended_as_asked(0, stopped=False) and ended_as_asked(0, stopped=True)
    assert ended_as_asked(143, stopped=True) and ended_as_asked(-15, stopped=True), "saved, or killed as it closed"
    assert not ended_as_asked(143, stopped=False) and not ended_as_asked(-15, stopped=False), "nobody stopped it"
    assert not ended_as_asked(1, stopped=True) and not ended_as_asked(2, stopped=False)


def test_time_to_skill_is_judged_from_the_progress_a_run_has_written(tmp_path):
    from benchmarks.time_to_skill import ratios_to_first, skilled_yet

    args = Namespace(opponents=["chaser", "anchor"], threshold=0.9)
    assert not skilled_yet(tmp_path / "nothing", args)
    run = tmp_path / "custom" / "BallSumo-v0_0"
    run.mkdir(parents=True)
    header = "time/total_timesteps,time/time_elapsed,eval/mean_reward,eval/win_rate_vs_chaser,eval/win_rate_vs_anchor\n"
    (run / "progress.csv").write_text(header + "1000,5,0.1,0.95,0.5\n")
    assert not skilled_yet(tmp_path / "custom", args)
    (run / "progress.csv").write_text(header + "1000,5,0.1,0.95,0.5\n2000,9,0.2,0.9,0.9\n")
    assert skilled_yet(tmp_path / "custom", args)
    assert ratios_to_first({"custom": 30.0, "rllib_ppo": 60.0}, ["custom", "rllib_ppo"]) == {"rllib_ppo": 0.5}
    assert ratios_to_first({"custom": float("inf"), "rllib_ppo": 60.0}, ["custom", "rllib_ppo"]) == {}


@pytest.mark.parametrize("config", sorted((REPO / "benchmarks" / "configs").glob("*.yml")), ids=lambda path: path.name)
def test_each_benchmark_config_is_taken_by_the_command_results_gives_it(config, tmp_path):
    """benchmarks/configs holds the sections RESULTS' commands name (``--algo distill`` for
    distill_*.yml, ``--algo ppo`` for ppo_*.yml): each is read as it stands, its keys the
    algorithm's, its teacher and its pool players that exist, and the run is the section's."""
    import yaml

    from agents.trainer import run as trainer

    algo = config.name.split("_")[0]
    argv = ["--algo", algo, "--env", "BallSumo-v0", "--config", str(config), "--log-dir", str(tmp_path)]
    section = yaml.safe_load(config.read_text())["BallSumo-v0"]
    if "stages" in section:  # a chain of sections: each stage's, checked when it is read
        from agents.trainer.command import TRAIN_COMMAND, command_parser
        from agents.trainer.stages import staged_section

        stages = staged_section(command_parser(TRAIN_COMMAND).parse_args(argv))
        assert stages is not None and stages[-1]["algo"] == algo
        return
    if section.get("teacher") == "":  # a run of another command teaches, named on the command line
        argv += ["--hyperparams", "teacher=chaser"]
        section["teacher"] = "chaser"
    _, setup, _ = trainer.prepare(argv, make_folder=False)
    assert setup.algo.name == algo and setup.timesteps == section["n_timesteps"]
    assert setup.opponent == "self" and setup.self_play is not None
    teacher = section.get("teacher")
    assert teacher is None or setup.checked.config.teacher == teacher


def test_a_benchmarks_block_is_written_in_the_study_page_that_holds_it(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\nthe headline\n")
    studies = tmp_path / "studies"
    studies.mkdir()
    page = studies / "2026-11-30-a.md"
    page.write_text("# A\n\n<!-- results:a -->\nold\n<!-- /results:a -->\n")
    runner.record(results, "a", "python -m benchmarks.a", "here", "new table")
    assert "new table" in page.read_text() and results.read_text() == "# Results\n\nthe headline\n"
    assert runner.results_file(results, "b").parent == studies, "a block no page holds gets a dated page of its own"
    assert (REPO / "benchmarks" / "studies").is_dir()
    for name in [*runner.BENCHMARKS, "tune_workers"]:  # each shipped block is in one study page
        assert runner.results_file(REPO / "benchmarks" / "RESULTS.md", name).is_file(), name


def test_rllib_learners_refuses_an_env_without_an_rllib_section_before_any_cluster(capsys):
    from benchmarks import rllib_learners
    from tests.helpers import refused

    err = refused(capsys, rllib_learners.main, ["--env", "UAVGrid-v0", "--no-progress"])
    assert "has no section for 'UAVGrid-v0'; it has: BallSumo-v0, BallDuel-v0, UAVGridImage-v0" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nosuch"], "python -m benchmarks takes flags only, got 'nosuch'; --only takes: env_throughput"),
        (["time_to_skill", "--seeds", "1"], "python -m benchmarks.time_to_skill runs it alone"),
        (["--only", "nosuch"], "argument --only: invalid choice: 'nosuch'"),
        (["--only", "naive_vs_batched", "--results", "{tmp}"], "is a folder; give the results file (a .md) to update"),
        (["--only", "naive_vs_batched", "--results", "{tmp}/no/RESULTS.md"], "/no' does not exist"),
    ],
)
def test_the_benchmarks_front_door_refuses_in_one_line_before_any_benchmark(argv, message, tmp_path, monkeypatch, capsys):
    from tests.helpers import refused

    measured = []
    monkeypatch.setattr(runner, "measure", lambda name, args: measured.append(name))
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert message in refused(capsys, runner.main, argv)
    assert measured == [], "refused before any benchmark ran"
