"""The distillation learner (agents.algorithms.distill): the decaying mix of teacher and student,
the loss falling on frames it never trained on, the student playing where every model plays, and
every refusal before any folder (the teachers' labels: test_teachers.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents import train
from agents.algorithms import distill
from agents.algorithms.networks import network_spec
from agents.algorithms.teachers import LabelBuffer, make_teacher
from agents.artifacts.runs import read_config
from agents.common.configuration.registry import ALGORITHMS
from agents.session.cli import run_cli
from agents.session.progress import Progress
from ballenvs.duel.physics import RIGHT
from ballenvs.duel.two_player_game import TwoPlayerDuel
from tests.agents.algorithms.teaching import LEAN, QUICK, SUMO, SUMO_RULES, config, stacked_env, trained
from tests.helpers import refused


def test_the_teachers_share_falls_linearly_to_zero_over_its_fraction():
    keys = config("chaser", teacher_share=0.8, teacher_share_fraction=0.5)
    shares = [distill.teacher_share(keys, Progress(steps, 0, 1000)) for steps in (0, 125, 250, 500, 900)]
    np.testing.assert_allclose(shares, [0.8, 0.6, 0.4, 0.0, 0.0])


def test_a_step_plays_the_teachers_action_with_the_teachers_share(monkeypatch):
    """Which steps the teacher played, counted: all at share 1, about half at 0.5, none at 0."""
    env = stacked_env(8)
    spec = network_spec(env.observation_space, 9, "CnnPolicy", LEAN)
    agent = distill.DistillAgent(spec, config("chaser", learning_starts=10**6), "cpu")
    agent.act = lambda obs, epsilon: np.zeros(len(obs), dtype=np.int64)  # the student never thrusts
    played = []
    real_step = env.step
    env.step = lambda actions: (played.append(actions.copy()), real_step(actions))[1]
    for share, expected in ((1.0, 1.0), (0.5, 0.5), (0.0, 0.0)):
        played.clear()
        agent.config.teacher_share, agent.config.teacher_share_fraction = share, 1.0
        distill.learn(
            agent,
            env,
            Progress(0, 0, 10**9),
            8 * 200,
            distill.Hooks(),
            LabelBuffer(2000, env.observation_space, "cpu"),
        )
        thrusts = np.mean(np.concatenate(played) != 0)  # chaser always thrusts
        assert thrusts == pytest.approx(expected, abs=0.06)


def test_a_short_run_lowers_the_loss_on_frames_it_never_trained_on():
    """Held-out frames from other games (other seeds), labelled by the same teacher."""
    held_out = LabelBuffer(4000, stacked_env(8).observation_space, "cpu", seed=1)
    teacher = make_teacher(config("pusher"), "cpu", 0)
    env = stacked_env(8, seed=100)
    obs, states = env.reset(), env.reset_info["state"]
    rng = np.random.default_rng(0)
    for _ in range(300):
        actions, targets = teacher.label(states)
        held_out.add(obs, targets, actions)
        step = env.step(np.where(rng.random(8) < 0.5, actions, rng.integers(9, size=8)))
        obs, states = step.observations, step.info["state"]
    frames, targets = held_out.sample(2000)
    train_env = stacked_env(8)
    spec = network_spec(train_env.observation_space, 9, "CnnPolicy", LEAN)
    keys = config("pusher", learning_starts=256, batch_size=64, learning_rate=1e-3, teacher_share_fraction=1.0)
    agent = distill.DistillAgent(spec, keys, "cpu", seed=0)
    with torch.no_grad():
        before = float(agent.loss(frames, targets))
    distill.learn(
        agent,
        train_env,
        Progress(0, 0, 4000),
        4000,
        distill.Hooks(),
        LabelBuffer(4000, train_env.observation_space, "cpu"),
    )
    with torch.no_grad():
        after = float(agent.loss(frames, targets))
    assert after < 0.7 * before, (before, after)


def test_the_student_is_saved_as_every_model_and_evaluated_by_agents_evaluate(student, capsys):
    from agents.evaluate import main as evaluate_main

    assert read_config(student)["hyperparams"]["teacher"] == "pusher"
    assert (student / "final_model.pt").is_file() and (student / "zoo" / "dqn" / "BallSumo-v0_1" / "BallSumo-v0.zip").is_file()
    assert run_cli(evaluate_main, [str(student), "--opponent", "pusher", "--episodes", "4"]) == 0
    assert "BallSumo-v0: 4 episodes" in capsys.readouterr().out


def test_the_student_plays_in_a_self_play_pool_and_resumes(student, tmp_path):
    from agents.twoplayer.selfplay import scripted_player
    from ballenvs.reference import reference_for

    player = scripted_player(str(student), 0, reference_for("BallSumo-v0").arena, "BallSumo-v0", {}, 4, "cpu")
    duel = TwoPlayerDuel(5, obs_type="pixels", obs_size=36, subpixel=True, **SUMO_RULES)
    rngs = [np.random.default_rng(i) for i in range(5)]
    duel.reset(rngs)
    actions = player.act(duel.seat(RIGHT, rngs))
    assert actions.shape == (5,) and ((actions >= 0) & (actions < 9)).all()
    argv = ["--resume", str(student), "--timesteps", "200", "--log-dir", str(tmp_path), "--eval-freq", "0", "--no-progress"]
    assert run_cli(train.main, argv) == 0
    assert (tmp_path / "distill" / "BallSumo-v0_1" / "final_model.pt").is_file()


def test_a_uav_student_of_greedy_is_saved_evaluated_and_kickstarted(tmp_path, capsys):
    from agents.evaluate import main as evaluate_main

    argv = ["--algo", "distill", "--env", "UAVGridImage-v0", "--timesteps", "400", "--n-envs", "4", "--eval-freq", "0"]
    argv += ["--no-progress", "--threads", "1", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "learning_starts=100", "batch_size=16", "buffer_size=1000"]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "distill" / "UAVGridImage-v0_1"
    assert read_config(run)["hyperparams"]["teacher"] == "greedy"
    assert run_cli(evaluate_main, [str(run), "--episodes", "2"]) == 0
    assert "UAVGridImage-v0: 2 episodes" in capsys.readouterr().out
    kickstart = ["--algo", "kickstart", *argv[2:], "--hyperparams", "learning_starts=100", "batch_size=16"]
    kickstart += ["buffer_size=1000", f"start_from={run}"]
    assert run_cli(train.main, kickstart) == 0  # DQN from the student, greedy's term beside the TD loss
    assert read_config(tmp_path / "kickstart" / "UAVGridImage-v0_1")["hyperparams"]["start_from"] == str(run)


def test_distill_is_registered_with_its_teacher_key():
    algo = ALGORITHMS["distill"]
    assert {"teacher", "temperature", "teacher_share", "teacher_share_fraction"} <= set(algo.keys)
    assert algo.config_path().name == "distill.yml"


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--algo", "custom", "--teacher", "planner"],
            "--teacher: custom DQN learns from no teacher; algorithms that do: distill",
        ),
        (["--algo", "distill", *SUMO, "--teacher", "nobody"], "teacher 'nobody': none of BallSumo-v0's built-in players"),
        (
            ["--algo", "distill", *SUMO, "--teacher", "planner:2/2"],
            "teacher: player 'planner:2/2': planner:H/H/... takes different holds H",
        ),
        (["--algo", "distill", *SUMO, "--env-kwargs", "state_info=false"], "add --env-kwargs state_info=true"),
        (["--algo", "distill", "--env", "UAVGrid-v0"], "has no section for 'UAVGrid-v0'"),
        (["--algo", "distill", *SUMO, "--hyperparams", "temperature=0"], "temperature"),
        (
            ["--algo", "distill", *SUMO, "--hyperparams", "teacher_network=nowhere"],
            "teacher_network 'nowhere': ",
        ),
        (
            ["--algo", "distill", "--env", "UAVGridImage-v0", "--teacher", "chaser"],
            "teacher 'chaser': UAVGridImage-v0 is a one-player game, taught by a reference policy that reads its "
            "state: greedy",
        ),
        (
            ["--algo", "distill", "--env", "UAVGridImage-v0", "--env-kwargs", "state_info=false"],
            "add --env-kwargs state_info=true",
        ),
    ],
)
def test_bad_teachers_and_options_are_refused_before_any_folder(argv, message, tmp_path, capsys):
    assert message in refused(capsys, train.main, [*argv, "--log-dir", str(tmp_path)], tmp_path)


def test_a_teacher_model_of_another_env_or_observation_is_refused(state_model, student, tmp_path, capsys):
    duel_model = [*QUICK[2:], "--env", "BallDuel-v0", "--env-kwargs", "state_info=true", "obs_type=pixels", "obs_size=36"]
    err = refused(
        capsys,
        train.main,
        [
            "--algo",
            "distill",
            "--config",
            str(distill_config_for_duel(tmp_path)),
            "--teacher",
            str(state_model),
            *duel_model,
            "--log-dir",
            str(tmp_path),
        ],
        tmp_path,
    )
    assert "plays 'BallSumo-v0'; this student plays BallDuel-v0" in err
    err = refused(
        capsys, train.main, ["--algo", "distill", *SUMO, "--teacher", str(student), "--log-dir", str(tmp_path)], tmp_path
    )
    assert "sees obs_type='pixels' stacked; a teacher sees one state" in err
    err = refused(
        capsys,
        train.main,
        ["--algo", "distill", *QUICK, f"teacher_network={state_model}", "--teacher", "pusher", "--log-dir", str(tmp_path)],
        tmp_path,
    )
    assert "a network goes into a planner's search; teacher 'pusher' is not a planner" in err


def test_an_expert_iteration_student_is_taught_by_the_planner_searching_with_a_network(state_model, tmp_path):
    run = trained(tmp_path, "distill", *QUICK, f"teacher_network={state_model}", "--timesteps", "128")
    assert read_config(run)["hyperparams"]["teacher_network"] == str(state_model)
    assert (run / "final_model.pt").is_file()


def distill_config_for_duel(tmp_path):
    path = tmp_path / "duel.yml"
    path.write_text(
        "BallDuel-v0:\n  policy: CnnPolicy\n  n_timesteps: 1000\n  frame_stack: 4\n  env_kwargs:\n    state_info: true\n"
    )
    return path


@pytest.mark.parametrize("vec_env", ["dummy", "subproc"])
def test_a_student_learns_through_sb3s_vector_envs_too(vec_env, tmp_path):
    argv = ["--algo", "distill", "--env", "UAVGridImage-v0", "--vec-env", vec_env, "--timesteps", "200", "--n-envs", "2"]
    argv += ["--eval-freq", "0", "--no-progress", "--threads", "1", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "learning_starts=100", "batch_size=16", "buffer_size=1000"]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "distill" / "UAVGridImage-v0_1"
    assert read_config(run)["vec_env"] == vec_env and (run / "final_model.pt").is_file()


def test_the_learner_reports_distills_own_learning_starts(tmp_path):
    from agents.trainer import run as trainer

    _, setup, learner = trainer.prepare(
        ["--algo", "distill", "--env", "BallSumo-v0", "--log-dir", str(tmp_path)], make_folder=False
    )
    learner.config = setup.checked.config  # what start() takes from check()
    assert learner.learning_starts == setup.checked.config.learning_starts == 5000  # distill.yml's (0 before)


def test_a_stack_of_one_frame_is_no_stack_and_the_teacher_still_reads_the_state(tmp_path):
    """frame_stack=1 once sent the native env through stable-baselines3's wrappers, where a teacher
    cannot read info['state']: the state student's section with frame_stack=1 learns as without it."""
    from agents.trainer import run as trainer

    argv = ["--algo", "distill", "--env", "BallSumo-v0", "--config", "benchmarks/configs/distill_state.yml"]
    argv += ["--timesteps", "200", "--n-envs", "2", "--eval-freq", "0", "--save-freq", "0", "--no-progress"]
    argv += ["--threads", "1", "--log-dir", str(tmp_path), "--hyperparams", "frame_stack=1", "learning_starts=64"]
    _, setup, _ = trainer.prepare(argv, make_folder=False)
    assert setup.section.frame_stack is None
    assert run_cli(train.main, argv) == 0
    assert (tmp_path / "distill" / "BallSumo-v0_1" / "final_model.pt").is_file()
