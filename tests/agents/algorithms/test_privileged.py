"""Our PPO and our DQN reading the game's state in training only (agents.algorithms.privileged): the
state beside the frames, the one an ended game ended in; a pixel run whose critic reads the state and
whose actor predicts it, saved as an actor that plays from the frames alone, and resumed; our DQN's
Q-network predicting it beside the TD loss, saved without its head; refused in one line where the
env does not report the state."""

from __future__ import annotations

import numpy as np
import torch

from agents import train
from agents.algorithms import ppo
from agents.algorithms.networks import QNetwork
from agents.algorithms.privileged import FRAMES, STATE, StateSteps
from agents.common.configuration.hyperparameters import TeacherGame
from agents.evaluate import main as evaluate_main
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import run_cli
from ballenvs.reference import reference_for
from tests.agents.algorithms.teaching import QUICK, stacked_env
from tests.helpers import refused

PIXELS = {"obs_type": "pixels", "obs_size": 36, "subpixel": True, "state_info": True, "opponent": "chaser"}
#: The study's section (benchmarks/configs/ppo_pixels_from_nothing.yml), tiny: the teaching tests'
#: flags, rollouts of 8 steps, one epoch, a narrow head.
CONFIG = "benchmarks/configs/ppo_pixels_from_nothing.yml"
RUN = [*QUICK[: QUICK.index("--hyperparams") + 1], QUICK[-1], "rollout_steps=8", "n_minibatches=2", "n_epochs=1"]
RUN += ["policy_kwargs=dict(features_extractor_class=LeanCNN, net_arch=[32])"]
RUN = ["--config", CONFIG, *RUN]


def test_the_state_beside_the_frames_is_what_obs_type_state_shows_and_an_ended_game_keeps_its_last():
    game = TeacherGame("BallSumo-v0", PIXELS)
    steps = StateSteps(stacked_env(4, seed=3), game)
    first = steps.first_observations()
    arena = reference_for("BallSumo-v0").arena
    np.testing.assert_array_equal(first[STATE], arena.state_observation(steps.reset_info["state"], PIXELS))
    assert first[FRAMES].shape == (4, 4, 36, 36) and first[STATE].shape == (4, 11)
    for _ in range(200):  # every game ends within the clock's 100 steps
        step = steps.step(np.zeros(4, dtype=np.int64))
        if step.ended.any():
            break
    ended = step.ended
    assert ended.any()
    # The state an ended game ended in: a ball out of the ring (positions in ring radii) or the clock
    # (the last number, the share of the game left) run out; the next game's first has all its clock.
    last = step.next_observations[STATE][ended]
    out = np.maximum(np.hypot(last[:, 0], last[:, 1]), np.hypot(last[:, 4], last[:, 5])) >= 1.0
    assert (out | (last[:, -1] == 0.0)).all()
    assert (step.observations[STATE][ended, -1] == 1.0).all()
    np.testing.assert_array_equal(step.next_observations[STATE][~ended], step.observations[STATE][~ended])
    steps.close()


def test_a_privileged_run_saves_an_actor_that_plays_from_frames_and_resumes(tmp_path, capsys):
    argv = ["--algo", "ppo", *RUN, "--timesteps", "64", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "ppo" / "BallSumo-v0_1"
    saved = load_checkpoint(run / "final_model.pt")
    agent = saved["agent"]
    assert set(saved["spec"]["parts"][""]) >= {"kind", "shape"} and saved["spec"]["parts"][""]["kind"] == "image"
    assert agent["critic"]["head.0.weight"].shape[1] == 11  # the critic reads the state's 11 numbers
    assert agent["state_head"]["weight"].shape == (11, saved["spec"]["parts"][""]["features"])
    capsys.readouterr()
    assert run_cli(evaluate_main, [str(run / "final_model.pt"), "--episodes", "2", "--deterministic"]) == 0
    assert "BallSumo-v0: 2 episodes, return" in capsys.readouterr().out
    argv = ["--resume", str(run), "--timesteps", "32", "--log-dir", str(tmp_path), "--no-progress"]
    assert run_cli(train.main, argv) == 0
    resumed = load_checkpoint(tmp_path / "ppo" / "BallSumo-v0_2" / "final_model.pt")
    assert resumed["progress"]["num_timesteps"] == 96 and resumed["agent"]["n_updates"] > agent["n_updates"]
    from benchmarks import state_head  # what its actor reads of the state: R^2 a number, at most 1

    explained = state_head.main([str(run), "--steps", "4", "--envs", "2"])
    assert list(explained) == list(state_head.NUMBERS) and all(value <= 1.0 for value in explained.values())


def test_the_state_prediction_trains_the_actors_features():
    game = TeacherGame("BallSumo-v0", PIXELS)
    steps = StateSteps(stacked_env(8, seed=4), game)
    config = ppo.PPOConfig(state_prediction=1.0, game=game, state_size=11, learning_rate=1e-3)
    from agents.algorithms.networks import network_spec
    from agents.common.networks.lean_cnn import LeanCNN

    policy_kwargs = {"features_extractor_class": LeanCNN, "net_arch": [32]}
    spec = network_spec(steps.observation_space[FRAMES], 9, "CnnPolicy", policy_kwargs)
    agent = ppo.PPOAgent(spec, config, "cpu", seed=0)
    observation = steps.first_observations()
    frames, states = torch.as_tensor(observation[FRAMES]), torch.as_tensor(observation[STATE])
    assert agent.state_head is not None

    def error() -> float:
        with torch.no_grad():
            return float(torch.nn.functional.mse_loss(agent.state_head(agent.actor.features(frames)), states))

    before = error()
    encoder = [p.detach().clone() for p in agent.actor.encoders.parameters()]
    rows = {FRAMES: frames, STATE: states}
    for _ in range(30):
        loss, _ = agent.policy_loss(rows, torch.zeros(8, dtype=torch.long), torch.zeros(8), torch.zeros(8))
        agent.gradient_step(loss)
    assert error() < 0.5 * before
    assert any(not torch.equal(a, b) for a, b in zip(encoder, agent.actor.encoders.parameters()))
    steps.close()


def test_reading_the_state_without_state_info_is_refused_before_any_folder(tmp_path, capsys):
    argv = ["--algo", "ppo", *RUN, "--env-kwargs", "state_info=false", "--log-dir", str(tmp_path)]
    err = refused(capsys, train.main, argv, tmp_path)
    assert "critic_reads_state and state_prediction read the game's state" in err and "state_info=true" in err


def test_our_dqn_predicting_the_state_keeps_it_in_its_buffer_and_saves_a_q_network_of_frames(tmp_path, capsys):
    argv = ["--algo", "custom", "--config", "zoo_configs/selfplay_pixels.yml", *QUICK, "n_timesteps=256"]
    argv += ["state_prediction=1.0", "augment_shift=2", "policy_kwargs=dict(features_extractor_class=LeanCNN, net_arch=[32])"]
    argv += ["--env-kwargs", "obs_size=36", "subpixel=true", "state_info=true", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "custom" / "BallSumo-v0_1"
    saved = load_checkpoint(run / "final_model.pt")
    assert saved["spec"]["parts"][""]["kind"] == "image"  # the Q-network reads the frames alone
    assert saved["agent"]["state_head"]["weight"].shape == (11, saved["spec"]["parts"][""]["features"])
    progress = (run / "progress.csv").read_text().splitlines()
    errors = [row.split(",")[progress[0].split(",").index("train/state_error")] for row in progress[1:]]
    assert errors[-1] and float(errors[-1]) > 0.0, progress  # logged once updates begin
    capsys.readouterr()
    assert run_cli(evaluate_main, [str(run / "final_model.pt"), "--episodes", "2"]) == 0
    assert "BallSumo-v0: 2 episodes, return" in capsys.readouterr().out
    argv = ["--resume", str(run), "--timesteps", "64", "--log-dir", str(tmp_path), "--no-progress"]
    assert run_cli(train.main, argv) == 0
    resumed = load_checkpoint(tmp_path / "custom" / "BallSumo-v0_2" / "final_model.pt")
    assert resumed["progress"]["num_timesteps"] == 320 and resumed["agent"]["n_updates"] > saved["agent"]["n_updates"]


def test_our_dqns_state_prediction_trains_the_q_networks_features_beside_the_td_loss():
    from agents.algorithms import dqn
    from agents.algorithms.buffer import Batch
    from agents.algorithms.networks import network_spec
    from agents.common.configuration.hyperparameters import StateDQNConfig
    from agents.common.networks.lean_cnn import LeanCNN

    game = TeacherGame("BallSumo-v0", PIXELS)
    steps = StateSteps(stacked_env(8, seed=5), game)
    config = StateDQNConfig(state_prediction=1.0, game=game, state_size=11, learning_rate=1e-3)
    spec = network_spec(steps.observation_space[FRAMES], 9, "CnnPolicy", {"features_extractor_class": LeanCNN})
    agent = dqn.DQNAgent(spec, config, "cpu", seed=0)
    observation = steps.first_observations()
    assert agent.state_head is not None and agent.act(observation, 0.0).shape == (8,)
    played = [steps.step(agent.random_actions(8)).observations for _ in range(8)]  # games in several phases
    rows = {part: torch.as_tensor(np.concatenate([o[part] for o in played])) for part in (FRAMES, STATE)}
    batch = Batch(rows, torch.zeros(64, dtype=torch.long), torch.zeros(64), rows, torch.ones(64))

    def error() -> float:
        with torch.no_grad():
            return float(torch.nn.functional.mse_loss(agent.state_head(agent.q.features(rows[FRAMES])), rows[STATE]))

    before = error()
    agent.update(batch)
    first = agent.figures()["train/state_error"]  # each number over its spread
    for _ in range(30):
        agent.update(batch)
    assert error() < 0.5 * before and agent.figures()["train/state_error"] < 0.5 * first
    steps.close()


def test_our_dqn_predicting_the_state_without_state_info_is_refused_before_any_folder(tmp_path, capsys):
    argv = ["--algo", "custom", "--config", "zoo_configs/selfplay_pixels.yml", *QUICK, "state_prediction=1.0"]
    err = refused(capsys, train.main, argv + ["--log-dir", str(tmp_path)], tmp_path)
    assert "state_prediction read the game's state" in err and "state_info=true" in err


def test_an_encoder_trained_to_read_the_state_starts_the_actor_and_another_file_is_refused(tmp_path, capsys):
    from benchmarks import state_head, state_reader

    reader = tmp_path / "reader.pt"
    explained = state_reader.main(["--config", CONFIG, "--out", str(reader), "--envs", "2", "--steps", "8", "--epochs", "1"])
    assert list(explained) == list(state_head.NUMBERS)
    saved = torch.load(reader, weights_only=True)
    actor = QNetwork(saved["spec"])
    ppo.load_encoder(actor, str(reader))
    assert all(torch.equal(actor.encoders.state_dict()[name], value) for name, value in saved["encoders"].items())
    argv = ["--algo", "ppo", *RUN, f"encoder_from={reader}", "--timesteps", "64", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    capsys.readouterr()
    model = tmp_path / "ppo" / "BallSumo-v0_1" / "final_model.pt"
    argv = ["--algo", "ppo", *RUN, f"encoder_from={model}", "--log-dir", str(tmp_path)]
    assert "not a reader's weights" in refused(capsys, train.main, argv, tmp_path)
