"""agents.compare: tiny real comparisons write a plot, a report and the raw numbers."""

from __future__ import annotations

import csv
import json
import re

import pytest

from agents import compare
from agents.session.cli import run_cli
from tests.helpers import tiny_run

#: Every comparison trains: the unit tier (-m "not slow") leaves them out.
pytestmark = pytest.mark.slow

TINY = [*tiny_run(), "--score-episodes", "3", "--seeds", "1", "--hyperparams", "buffer_size=500", "learning_starts=100"]


def read_png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize(
    "env_id,env_kwargs",
    [("UAVGrid-v0", ["max_episode_steps=50"]), ("BallDuel-v0", ["max_episode_steps=60", "obs_type=state"])],
)
def test_compare_writes_curves_report_and_csv(tmp_path, capsys, env_id, env_kwargs):
    argv = ["--env", env_id, *TINY, "--env-kwargs", *env_kwargs, "--log-dir", str(tmp_path)]
    if env_id == "BallDuel-v0":
        argv += ["--hyperparams", "buffer_size=500", "learning_starts=100", "policy=MlpPolicy", "frame_stack=1"]
    assert run_cli(compare.main, argv) == 0
    notes = capsys.readouterr().err
    assert "[run 1/2] SB3 DQN, seed 0" in notes and "[run 2/2] custom DQN, seed 0" in notes
    folder = tmp_path / "compare" / f"{env_id}_1"
    width, height = read_png_size(folder / "curves.png")
    assert width > 800 and height > 300
    assert read_png_size(folder / "profiles.png")[0] > 500
    report = (folder / "report.md").read_text()
    assert "| SB3 DQN |" in report and "| custom DQN |" in report and "steps/s" in report
    assert "IQM [95% CI] over seeds" in report
    with open(folder / "curves.csv") as file:
        rows = list(csv.DictReader(file))
    agents = {row["agent"] for row in rows}
    assert {"SB3 DQN", "custom DQN"} <= agents
    assert any(a.startswith("baseline: ") for a in agents)
    steps = sorted({int(row["timesteps"]) for row in rows if row["agent"] == "custom DQN"})
    assert steps == [200, 400]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(manifest["runs"]["SB3 DQN"]) == 1 and len(manifest["runs"]["custom DQN"]) == 1
    # Each agent's final model on the env's own yardsticks, a signed figure per column.
    yardsticks = (
        [
            f"wins vs {name}"
            for name in ("still", "random", "chaser", "pusher", "anchor", "sprinter", "champion", "dqn_champion")
        ]
        if env_id == "BallDuel-v0"
        else ["minus greedy (same episodes)"]
    )
    lines = report.splitlines()
    header = lines.index("| agent | " + " | ".join(yardsticks) + " |")
    rows = lines[header + 2 : header + 4]
    assert [row.split(" | ")[0] for row in rows] == ["| SB3 DQN", "| custom DQN"]
    cells = [cell for row in rows for cell in row.strip("| ").split(" | ")[1:]]
    assert all(re.fullmatch(r"\S+ \[\S+, \S+\] \(.+\)", cell) for cell in cells), "IQM [low, high] (standard errors)"
    if env_id == "BallDuel-v0":  # win rates, in percent
        assert all(cell.split(" [")[0].endswith("%") for cell in cells)
    else:  # a difference of returns, signed
        assert all(cell[0] in "+-" for cell in cells)
    if env_id == "UAVGrid-v0":
        assert "reached greedy" in report


def test_from_runs_replots_without_training(tmp_path, capsys):
    argv = ["--env", "UAVGrid-v0", *TINY, "--env-kwargs", "max_episode_steps=50", "--log-dir", str(tmp_path)]
    assert run_cli(compare.main, argv) == 0
    folder = tmp_path / "compare" / "UAVGrid-v0_1"
    (folder / "curves.png").unlink()
    capsys.readouterr()
    assert run_cli(compare.main, ["--from-runs", str(folder)]) == 0
    assert "[run" not in capsys.readouterr().out
    assert (folder / "curves.png").is_file()


def test_from_runs_of_a_plain_folder_is_a_clear_error(tmp_path, capsys):
    assert run_cli(compare.main, ["--from-runs", str(tmp_path)]) == 2
    assert "no manifest.json there" in capsys.readouterr().err


def test_the_help_says_only_what_compare_takes(capsys):
    from agents import compare

    with pytest.raises(SystemExit):
        compare.main(["--help"])
    assert "--resume" not in capsys.readouterr().out  # a trainer's flag, not compare's
