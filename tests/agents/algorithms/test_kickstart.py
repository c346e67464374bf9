"""Kickstarted DQN (agents.algorithms.kickstart): the teacher's term falls to zero when its share ends
and the teacher labels nothing after; a run starts from a distilled student's policy."""

from __future__ import annotations

import numpy as np
import torch

from agents import train
from agents.algorithms import kickstart
from agents.algorithms.dqn import replay_buffer
from agents.algorithms.kickstart import KickstartConfig
from agents.algorithms.networks import QNetwork
from agents.algorithms.policy import load_policy
from agents.common.configuration.hyperparameters import TeacherGame
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import run_cli
from agents.session.hooks import Hooks
from agents.session.progress import Progress
from tests.agents.algorithms.teaching import LEAN, QUICK, stacked_env
from tests.helpers import refused


def test_the_teacher_terms_weight_reaches_zero_when_its_share_ends():
    config = KickstartConfig(kickstart_weight=2.0, kickstart_fraction=0.25)
    weights = [kickstart.kickstart_weight(config, Progress(steps, 0, 1000)) for steps in (0, 125, 250, 251, 1000)]
    np.testing.assert_allclose(weights, [2.0, 1.0, 0.0, 0.0, 0.0])


def test_the_teacher_labels_while_its_term_counts_and_the_term_ends_at_zero():
    env = stacked_env(4)
    from agents.algorithms.networks import network_spec

    spec = network_spec(env.observation_space, 9, "CnnPolicy", LEAN)
    game = TeacherGame("BallSumo-v0", {"obs_type": "pixels", "obs_size": 36, "state_info": True})
    config = KickstartConfig(
        teacher="chaser", game=game, kickstart_fraction=0.5, learning_starts=40, batch_size=16, buffer_size=1000
    )
    agent = kickstart.KickstartAgent(spec, config, "cpu")
    seen = []
    real_update = agent.update
    agent.update = lambda batch: (seen.append(agent.weight), real_update(batch))[1]
    progress = Progress(0, 0, 400)
    kickstart.learn(agent, env, progress, 400, Hooks(), replay_buffer(config, env.observation_space, "cpu", 0))
    assert len(agent.labels) == 200  # the frames of its first half: 50 vector steps of 4
    assert seen[0] > 0.5 and seen[-1] == 0.0 and 0.0 in seen


def test_a_run_starts_from_the_students_policy(student, tmp_path):
    # Past learning_starts, but no update yet: the student's network.
    argv = ["--algo", "kickstart", *QUICK, f"start_from={student}", "learning_starts=4", "train_freq=1000"]
    argv += ["--teacher", "pusher", "--timesteps", "8", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    state = load_checkpoint(student / "final_model.pt")
    student_q = QNetwork(state["spec"])
    student_q.load_state_dict(state["agent"]["q"])
    run = tmp_path / "kickstart" / "BallSumo-v0_1"
    from agents.artifacts.runs import read_config

    started = load_policy(run / "final_model.pt", read_config(run)).q
    frames = torch.as_tensor(np.random.default_rng(0).integers(0, 256, size=(32, 4, 36, 36), dtype=np.uint8))
    with torch.no_grad():
        logits, values = student_q(frames), started(frames)
    temperature = state["config"]["temperature"]
    torch.testing.assert_close(values / temperature, logits, rtol=1e-4, atol=1e-4)  # softmax(Q / T) is the student's policy


def test_a_student_of_another_network_is_refused_before_any_folder(student, tmp_path, capsys):
    other = "policy_kwargs=dict(features_extractor_class=LeanCNN, net_arch=[64])"
    argv = ["--algo", "kickstart", *QUICK, f"start_from={student}", other, "--log-dir", str(tmp_path)]
    assert "is not this run's" in refused(capsys, train.main, argv, tmp_path)
    argv = ["--algo", "kickstart", *QUICK, f"start_from={tmp_path / 'nothing'}", "--log-dir", str(tmp_path)]
    assert f"start_from {str(tmp_path / 'nothing')!r}" in refused(capsys, train.main, argv, tmp_path)
