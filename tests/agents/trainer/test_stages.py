"""A config section that lists stages (agents.trainer.stages): one command trains each in turn, a
later stage reading the one before's run folder, and the staged run's folder plays as its last
stage's; what would mean different things to different stages is refused in one line."""

from __future__ import annotations

import pytest
import yaml

import agents
from agents import train
from agents.session.cli import run_cli
from tests.helpers import refused

#: Our DQN's state section from nothing, then finetune from it: each a few hundred steps.
STAGES = (
    "[dict(algo='custom', hyperparams=dict(learning_starts=64, buffer_size=500)),"
    " dict(algo='finetune', hyperparams=dict(start_from='previous', learning_starts=64, buffer_size=500,"
    " calibration_steps=64))]"
)
QUICK = ["--env", "BallSumo-v0", "--timesteps", "256", "--threads", "1", "--no-progress"]


@pytest.fixture
def staged(tmp_path):
    path = tmp_path / "staged.yml"
    path.write_text(yaml.safe_dump({"BallSumo-v0": {"stages": STAGES}}))
    return path


def test_a_staged_section_trains_each_stage_from_the_one_before_and_plays_as_its_last(staged, tmp_path, capsys):
    argv = ["--algo", "finetune", "--config", str(staged), *QUICK, "--log-dir", str(tmp_path / "runs")]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "runs" / "finetune" / "BallSumo-v0_1"
    record = yaml.safe_load((run / "stages.yml").read_text())["stages"]
    assert [stage["argv"][1] for stage in record] == ["custom", "finetune"]
    first, second = (stage["run"] for stage in record)
    assert f"start_from={first}" in record[1]["argv"] and "--seed" not in record[0]["argv"]
    assert (run / "final_model.pt").read_bytes() == (tmp_path / second / "final_model.pt").read_bytes()
    agents.load_player(run)  # the staged run plays as its last stage
    assert "2 stages in" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--algo", "custom"], "its last stage trains finetune; give --algo finetune"),
        (["--algo", "finetune", "--hyperparams", "gamma=0.9"], "--hyperparams: each stage's section says it"),
    ],
)
def test_what_a_staged_section_cannot_take_is_one_line_before_any_folder(staged, tmp_path, capsys, flags, named):
    argv = [*flags, "--config", str(staged), *QUICK, "--log-dir", str(tmp_path)]
    assert named in refused(capsys, train.main, argv, tmp_path)


@pytest.mark.parametrize(
    ("stages", "named"),
    [
        ("[dict(algo='a2c')]", "stage 1: unknown algo 'a2c'"),
        ("[dict(algo='finetune', hyperparams=dict(start_from='previous'))]", "the first stage has no previous stage"),
        ("[dict(algo='custom', config='nosuch.yml')]", "config 'nosuch.yml' is neither beside"),
    ],
)
def test_a_bad_stage_is_one_line_naming_it(tmp_path, capsys, stages, named):
    path = tmp_path / "staged.yml"
    path.write_text(yaml.safe_dump({"BallSumo-v0": {"stages": stages}}))
    argv = ["--algo", "custom", "--config", str(path), *QUICK, "--log-dir", str(tmp_path)]
    assert named in refused(capsys, train.main, argv, tmp_path)
