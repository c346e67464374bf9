"""The one trainer, ``python -m agents.train --algo NAME``, and its old names as aliases: the same
runs from the same flags; and the milestones every learner feeds (checkpoints, evaluations)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import yaml

from agents import custom_train, sb3_train, train
from agents.artifacts.runs import CONFIG_NAME
from agents.session.cli import run_cli
from tests.helpers import TINY, UAV, refused

#: (the alias, the --algo of agents.train that it stands for, any flags it is given)
ALIASES = [(sb3_train, "dqn", TINY), (custom_train, "custom", TINY), (custom_train, "pqn", ["--algo", "pqn", "--no-progress"])]


def recorded(run_dir):
    """What a run folder records of its run, less what differs between two runs of one command."""
    config = yaml.safe_load((run_dir / CONFIG_NAME).read_text())
    return {key: value for key, value in config.items() if key != "device"}


@pytest.mark.parametrize(("alias", "algo", "flags"), ALIASES, ids=lambda x: getattr(x, "__name__", str(x)))
def test_an_old_command_name_is_agents_train_with_its_algorithm_preset(alias, algo, flags, tmp_path):
    argv = [*UAV, "--timesteps", "200", "--seed", "3", "--save-freq", "100", *flags]
    assert run_cli(alias.main, [*argv, "--log-dir", str(tmp_path / "old")]) == 0
    assert run_cli(train.main, [*argv, "--algo", algo, "--log-dir", str(tmp_path / "new")]) == 0
    old, new = tmp_path / "old" / algo / "UAVGrid-v0_1", tmp_path / "new" / algo / "UAVGrid-v0_1"
    assert recorded(old) == recorded(new)
    assert sorted(p.name for p in old.iterdir() if not p.name.startswith("events")) == sorted(
        p.name for p in new.iterdir() if not p.name.startswith("events")
    )


def test_agents_train_defaults_to_sb3_dqn_and_resumes_a_run_with_its_own_algorithm(tmp_path):
    argv = [*UAV, "--timesteps", "200", *TINY, "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    assert (tmp_path / "dqn" / "UAVGrid-v0_1" / "final_model.zip").is_file()
    assert run_cli(custom_train.main, argv) == 0
    first = tmp_path / "custom" / "UAVGrid-v0_1"
    resume = ["--resume", str(first), "--timesteps", "100", "--log-dir", str(tmp_path), "--no-progress"]
    assert run_cli(train.main, resume) == 0
    resumed = yaml.safe_load((tmp_path / "custom" / "UAVGrid-v0_2" / CONFIG_NAME).read_text())
    assert resumed["algo"] == "custom" and resumed["resumed_from"].endswith("final_model.pt")


def test_every_registered_algorithm_is_an_algo_of_agents_train_and_the_aliases_keep_to_their_own(tmp_path, capsys):
    err = refused(capsys, train.main, ["--algo", "a2c", "--log-dir", str(tmp_path)], tmp_path)
    assert "unknown --algo 'a2c'; valid: dqn, custom, pqn" in err and err.count("rllib_ppo") == 1, "listed once"
    assert err.endswith("stable-baselines3's A2C is --algo sb3_a2c")
    err = refused(capsys, sb3_train.main, ["--algo", "pqn", "--log-dir", str(tmp_path)], tmp_path)
    assert "--algo 'pqn' (PQN) is trained by python -m agents.custom_train (and python -m agents.train)" in err


def test_our_agents_gpu_options_are_refused_for_sb3s_dqn_before_any_folder(tmp_path, capsys):
    err = refused(capsys, train.main, ["--amp", "--log-dir", str(tmp_path)], tmp_path)
    assert err == "error: --amp: an option of --algo custom, pqn, distill, kickstart, finetune, ppo, not of SB3 DQN"
    assert "unrecognized arguments: --compile" in refused(capsys, sb3_train.main, ["--compile"], tmp_path)


def test_a_config_section_sets_the_evaluations_its_flags_do_not_and_the_zoos_copy_leaves_them_out(tmp_path):
    argv = [*UAV, "--algo", "custom", "--timesteps", "400", "--no-progress", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "buffer_size=500", "learning_starts=100", "eval_freq=200", "eval_episodes=3"]
    _, setup, _ = train.prepare(argv, make_folder=False)
    assert (setup.eval_freq, setup.eval_episodes) == (200, 3)
    _, setup, _ = train.prepare([*argv, "--eval-freq", "100", "--eval-episodes", "2"], make_folder=False)
    assert (setup.eval_freq, setup.eval_episodes) == (100, 2)
    _, setup, _ = train.prepare(argv[:-2], make_folder=False)  # neither: the defaults, the run shorter than 25,000 steps
    assert (setup.eval_freq, setup.eval_episodes) == (400, 10)
    run_dir = train.main(argv)
    evaluations = np.load(run_dir / "evaluations.npz")
    assert list(evaluations["timesteps"]) == [200, 400] and evaluations["results"].shape == (2, 3)
    assert recorded(run_dir)["hyperparams"]["eval_episodes"] == 3
    zoo_section = yaml.safe_load((run_dir / "zoo" / "dqn" / "UAVGrid-v0_1" / "UAVGrid-v0" / "config.yml").read_text())
    assert "eval_freq" not in zoo_section and "eval_episodes" not in zoo_section and "buffer_size" in zoo_section


@pytest.mark.parametrize("algo", ["dqn", "custom", "pqn"])
def test_every_algorithm_trains_and_evaluates_on_channels_last_images(algo, tmp_path):
    """UAVGridImage-v0 with channels_last=True: the networks take channels first, so the images
    are transposed on the way in, for our loops as for stable-baselines3's."""
    argv = ["--env", "UAVGridImage-v0", "--algo", algo, "--n-envs", "2", "--timesteps", "128", "--eval-freq", "64"]
    argv += ["--eval-episodes", "1", "--no-progress", "--env-kwargs", "channels_last=true", "max_episode_steps=30"]
    if algo != "pqn":
        argv += ["--hyperparams", "learning_starts=32", "buffer_size=200"]
    assert run_cli(train.main, [*argv, "--log-dir", str(tmp_path)]) == 0
    run = tmp_path / algo / "UAVGridImage-v0_1"
    assert (run / "evaluations.npz").is_file() and any(run.glob("final_model.*"))


@pytest.mark.parametrize("command", [train, sb3_train, custom_train], ids=lambda m: m.__name__)
def test_help_and_docstring_name_every_algorithm_the_command_trains_and_help_imports_no_torch(command, capsys):
    from agents.common.configuration.registry import trained_by

    module = command.__name__
    with pytest.raises(SystemExit) as exit_info:
        command.main(["--help"])
    assert exit_info.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    for name in trained_by(module):
        assert f"(--algo {name})" in shown, name
        assert f"(--algo {name})" in " ".join(command.__doc__.split()), f"{module}'s docstring lacks --algo {name}"
    # A fresh process, as `python -m`: --help answers before torch (and stable-baselines3) is imported.
    code = f"import runpy, sys\nsys.argv = [{module!r}, '--help']\n"
    code += f"try:\n    runpy.run_module({module!r}, run_name='__main__')\nexcept SystemExit:\n    pass\n"
    code += "print(sorted(m for m in ('torch', 'stable_baselines3') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-500:] + done.stderr


def test_the_final_model_plays_its_games_at_the_end_and_its_win_rate_is_kept(tmp_path, capsys):
    argv = ["--env", "BallDuel-v0", "--timesteps", "200", "--n-envs", "2", *TINY, "--final-games", "6"]
    assert run_cli(train.main, [*argv, "--log-dir", str(tmp_path)]) == 0
    run = tmp_path / "dqn" / "BallDuel-v0_1"
    judged = yaml.safe_load((run / "final_evaluation.yml").read_text())
    assert judged["model"] == "final_model.zip" and judged["episodes"] == 6 and 0.0 <= judged["win_rate"] <= 1.0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("final model, BallDuel-v0: 6 episodes, return") and "win rate" in out[-1]


def test_a_shortened_run_plays_no_final_games_unless_asked(tmp_path):
    assert run_cli(train.main, [*UAV, "--timesteps", "200", *TINY, "--log-dir", str(tmp_path)]) == 0
    assert not (tmp_path / "dqn" / "UAVGrid-v0_1" / "final_evaluation.yml").exists()


def test_a_run_whose_network_turns_nan_stops_in_one_line_keeping_its_last_finite_model(tmp_path, capsys, monkeypatch):
    import torch

    from agents.algorithms.qlearner import QLearner
    from agents.session.checkpoint import load_checkpoint

    step = QLearner.gradient_step

    def diverging(self, loss):  # a loss that blew up after 60 updates
        step(self, loss)
        if self.n_updates >= 60:
            with torch.no_grad():
                self.q.head[0].weight.fill_(float("nan"))

    monkeypatch.setattr(QLearner, "gradient_step", diverging)
    argv = [*UAV, "--algo", "custom", "--timesteps", "600", "--save-freq", "100", *TINY, "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the run's own notes, its one line
    assert err.startswith("error: the played network turned NaN or infinite by step 300") and "the last finite model is" in err
    run = tmp_path / "custom" / "UAVGrid-v0_1"
    kept = err.rsplit("the last finite model is ", 1)[1]
    assert load_checkpoint(kept)["progress"]["num_timesteps"] < 600  # it reads back: finite
    assert not (run / "final_model.pt").exists()


def test_a_self_play_run_keeps_its_best_model_by_its_evaluations_without_the_held_out_players(tmp_path, monkeypatch):
    """The champion and the planner measure a learner: its evaluations report them, and the score
    that keeps its best model leaves them out (agents.session.evaluation.score)."""
    from agents.session.evaluation import Evaluator
    from agents.trainer import run

    held_out: list = []

    class Recording(Evaluator):
        def __init__(self, *args, **kwargs):
            held_out.append(kwargs["held_out"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(run, "Evaluator", Recording)
    argv = ["--algo", "ppo", "--env", "BallSumo-v0", "--timesteps", "256", "--log-dir", str(tmp_path), "--no-progress"]
    argv += ["--eval-freq", "256", "--eval-episodes", "1", "--hyperparams", "n_envs=4", "rollout_steps=32", "n_minibatches=2"]
    assert run_cli(train.main, argv) == 0
    assert held_out == [("champion", "ppo_champion", "planner")]
    progress = (next(tmp_path.glob("ppo/BallSumo-v0_1")) / "progress.csv").read_text().splitlines()[0]
    assert "eval/win_rate_vs_champion" in progress, "still reported"
