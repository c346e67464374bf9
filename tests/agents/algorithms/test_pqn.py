"""PQN: Q(lambda) targets, LayerNorm networks, its config, resume, and real runs that evaluate."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from agents import custom_train
from agents.algorithms import pqn
from agents.algorithms.networks import QNetwork, network_spec
from agents.artifacts.runs import read_config
from agents.common.configuration.config import ConfigError, build_section
from agents.common.configuration.hyperparameters import PQNConfig
from agents.common.configuration.registry import ALGORITHMS
from agents.evaluate import main as evaluate_main
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import run_cli
from tests.helpers import refused, saved_mean_played


def test_q_lambda_targets_by_hand():
    # Two envs, four steps. Env 0 terminates at step 1 and is reset (step 2 starts a new
    # episode); env 1 is truncated at step 2, where the target bootstraps on the value of its
    # real last observation (7), not on the next episode's.
    rewards = torch.tensor([[1.0, 0.0], [2.0, 1.0], [3.0, 1.0], [4.0, 0.0]])
    terminated = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    ended = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    next_values = torch.tensor([[10.0, 5.0], [20.0, 6.0], [30.0, 7.0], [40.0, 8.0]])
    returns = pqn.q_lambda_targets(rewards, terminated, ended, next_values, gamma=0.5, q_lambda=0.5)
    # Env 0: G3 = 4 + .5*40 = 24; G2 = 3 + .5*(30 + .5*(24 - 30)) = 16.5; G1 = 2 (terminated);
    # G0 = 1 + .5*(10 + .5*(2 - 10)) = 4. Env 1: G3 = .5*8 = 4; G2 = 1 + .5*7 = 4.5 (truncated);
    # G1 = 1 + .5*(6 + .5*(4.5 - 6)) = 3.625; G0 = .5*(5 + .5*(3.625 - 5)) = 2.15625.
    expected = torch.tensor([[4.0, 2.15625], [2.0, 3.625], [16.5, 4.5], [24.0, 4.0]])
    assert torch.allclose(returns, expected)
    one_step = pqn.q_lambda_targets(rewards, terminated, ended, next_values, gamma=0.5, q_lambda=0.0)
    assert torch.allclose(one_step, rewards + 0.5 * (1 - terminated) * next_values)


def test_the_loop_bootstraps_ended_episodes_on_their_last_observation(monkeypatch):
    """What the training loop hands the targets: V' of an episode that ended is the value of
    its real last observation; elsewhere the next step's value."""
    from agents.environments.steps import make_steps

    env = make_steps("UAVGrid-v0", {"max_episode_steps": 5}, 3, 0, "native", None)
    spec = network_spec(env.observation_space, 9, "MultiInputPolicy", {"net_arch": [16], "layer_norm": True})
    agent = pqn.PQNAgent(spec, PQNConfig(rollout_steps=4, n_epochs=1, n_minibatches=2, learning_rate=1e-3), "cpu")
    valued = []  # every batch of observations the loop asks the values of
    real_values = agent.values
    agent.values = lambda observation: (valued.append(observation), real_values(observation))[1]
    calls = []
    real_targets = pqn.q_lambda_targets

    def capture(rewards, terminated, ended, next_values, gamma, q_lambda):
        # Before this rollout's updates: the values the loop used are the network's now.
        calls.append((ended.clone(), next_values.clone(), real_values(valued[-1])))
        return real_targets(rewards, terminated, ended, next_values, gamma, q_lambda)

    monkeypatch.setattr(pqn, "q_lambda_targets", capture)
    pqn.learn(agent, env, pqn.Progress(exploration_horizon=100), 24, pqn.Hooks())
    ended, next_values, final_values = calls[1]  # the second rollout: episodes of 5 steps end at its first step
    assert ended[0].tolist() == [1.0, 1.0, 1.0] and not ended[1:].any()
    assert torch.equal(next_values[0], final_values)
    assert len(valued[-1]["pos"]) == 3, "the three ended envs' last observations"


def test_layer_norm_after_each_hidden_layer_and_convolution():
    vector = network_spec(spaces.Box(-1, 1, (3,), np.float32), 4, "MlpPolicy", {"net_arch": [8, 8], "layer_norm": True})
    kinds = [type(m).__name__ for m in QNetwork(vector).head]
    assert kinds == ["Linear", "LayerNorm", "ReLU", "Linear", "LayerNorm", "ReLU", "Linear"]
    image = network_spec(spaces.Box(0, 255, (4, 64, 64), np.uint8), 9, "CnnPolicy", {"layer_norm": True})
    encoder = QNetwork(image).encoders["observation"]
    assert [type(m).__name__ for m in encoder.convs][:3] == ["Conv2d", "LayerNorm", "ReLU"]
    assert sum(isinstance(m, torch.nn.LayerNorm) for m in encoder.modules()) == 4
    plain = network_spec(spaces.Box(-1, 1, (3,), np.float32), 4, "MlpPolicy", {})
    assert not any(isinstance(m, torch.nn.LayerNorm) for m in QNetwork(plain).modules()), "off by default (DQN)"


def test_pqn_turns_layer_norm_on_unless_told_otherwise():
    section = build_section("UAVGrid-v0", {"policy": "MlpPolicy", "n_timesteps": 10}, {}, ALGORITHMS["pqn"].schema)
    space = spaces.Box(-1, 1, (3,), np.float32)
    assert pqn.settings(section, space, spaces.Discrete(4))[1]["layer_norm"] is True
    raw = {"policy": "MlpPolicy", "n_timesteps": 10, "policy_kwargs": "dict(layer_norm=False)"}
    section = build_section("UAVGrid-v0", raw, {}, ALGORITHMS["pqn"].schema)
    assert pqn.settings(section, space, spaces.Discrete(4))[1]["layer_norm"] is False


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"q_lambda": 1.5}, r"q_lambda=1.5 must be a number in \[0, 1\]"),
        ({"n_epochs": 0}, r"n_epochs=0 must be an integer in \[1, 1000\]"),
        ({"n_minibatches": 2.5}, "n_minibatches=2.5 must be an integer"),
        ({"buffer_size": 1000}, "unknown hyperparameter.*buffer_size.*valid: .*q_lambda"),
    ],
)
def test_pqn_config_is_checked(overrides, message):
    with pytest.raises(ConfigError, match=message):
        build_section("UAVGrid-v0", {"policy": "MultiInputPolicy", "n_timesteps": 10}, overrides, ALGORITHMS["pqn"].schema)


def test_more_minibatches_than_a_rollout_holds_are_refused_before_any_folder(tmp_path, capsys):
    argv = ["--algo", "pqn", "--env", "UAVGrid-v0", "--n-envs", "2", "--log-dir", str(tmp_path)]
    err = refused(capsys, custom_train.main, [*argv, "--hyperparams", "rollout_steps=4", "n_minibatches=9"])
    assert err == "error: n_minibatches=9: more than a rollout holds (4 steps x 2 envs); valid: 1..8"
    assert not list(tmp_path.iterdir())


TINY = {
    "BallDuel-v0": ["--env-kwargs", "max_episode_steps=40", "--hyperparams", "n_envs=4", "rollout_steps=8"],
    "UAVGrid-v0": ["--env-kwargs", "max_episode_steps=40", "--hyperparams", "n_envs=8", "rollout_steps=8"],
}


@pytest.mark.parametrize("env_id", ["BallDuel-v0", "UAVGrid-v0"])
def test_a_short_pqn_run_writes_a_model_that_evaluate_plays_and_resume_continues(env_id, tmp_path, capsys):
    argv = ["--algo", "pqn", "--env", env_id, "--timesteps", "256", "--log-dir", str(tmp_path), "--save-freq", "128"]
    argv += ["--eval-freq", "128", "--eval-episodes", "2", "--no-progress", *TINY[env_id]]
    assert run_cli(custom_train.main, argv) == 0
    run = tmp_path / "pqn" / f"{env_id}_1"
    assert read_config(run)["algo"] == "pqn"
    for name in ("final_model.pt", "best_model.pt", "checkpoints/model_128_steps.pt", "evaluations.npz", "progress.csv"):
        assert (run / name).is_file(), name
    state = load_checkpoint(run / "final_model.pt")
    assert state["format"] == "ballenvs-custom-pqn/1" and state["progress"]["num_timesteps"] == 256
    capsys.readouterr()
    assert run_cli(evaluate_main, [str(run / "final_model.pt"), "--episodes", "2", "--deterministic"]) == 0
    assert f"{env_id}: 2 episodes, return" in capsys.readouterr().out
    assert (
        run_cli(custom_train.main, ["--resume", str(run), "--timesteps", "64", "--log-dir", str(tmp_path), "--no-progress"])
        == 0
    )
    resumed = load_checkpoint(tmp_path / "pqn" / f"{env_id}_2" / "final_model.pt")
    assert resumed["progress"]["num_timesteps"] == 320 and resumed["agent"]["n_updates"] > state["agent"]["n_updates"]


def test_a_pqn_run_with_tail_averaging_saves_the_mean_of_its_last_updates(tmp_path):
    argv = ["--algo", "pqn", "--env", "UAVGrid-v0", "--timesteps", "256", "--log-dir", str(tmp_path), "--no-progress"]
    argv += ["--eval-freq", "0", *TINY["UAVGrid-v0"], "tail_averaging=0.75"]
    assert run_cli(custom_train.main, argv) == 0
    saved = saved_mean_played(tmp_path / "pqn" / "UAVGrid-v0_1")
    assert saved["tail_updates"] == 3  # a fold after the updates of each of the last three of four rollouts


def test_pqn_keeps_no_replay_buffer(tmp_path, capsys):
    argv = ["--algo", "pqn", "--env", "UAVGrid-v0", "--save-replay-buffer", "--log-dir", str(tmp_path)]
    assert run_cli(custom_train.main, argv) == 2
    assert "PQN keeps no replay buffer" in capsys.readouterr().err
