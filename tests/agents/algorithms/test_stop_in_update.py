"""A stop inside a long update (our PPO's and PQN's epochs of minibatches) is heard at the next
minibatch: the update is undone, the interrupted model is saved with its full rollout, and
``--resume`` makes that same update, ending where a run never stopped ends."""

from __future__ import annotations

import os
import signal

import torch

from agents import train
from agents.algorithms import pqn, rollouts
from agents.algorithms.ppo import PPOAgent
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import run_cli
from tests.agents.algorithms.test_ppo import SMALL

#: Long updates: 40 epochs of 2 minibatches a rollout of 8 steps x 4 envs.
LONG = [*SMALL, "n_epochs=40", "--save-freq", "0"]


def test_sigterm_inside_an_update_saves_the_model_before_it_and_resume_makes_it(tmp_path, monkeypatch):
    uninterrupted = tmp_path / "whole"
    assert run_cli(train.main, ["--algo", "ppo", *LONG, "--timesteps", "96", "--log-dir", str(uninterrupted)]) == 0
    step = PPOAgent.gradient_step
    calls = []

    def stopped_in_the_second_update(agent, loss):
        calls.append(1)
        if len(calls) == 80 + 30:  # 30 minibatches into the second rollout's 80
            os.kill(os.getpid(), signal.SIGTERM)
        step(agent, loss)

    monkeypatch.setattr(PPOAgent, "gradient_step", stopped_in_the_second_update)
    stopped = tmp_path / "stopped"
    assert run_cli(train.main, ["--algo", "ppo", *LONG, "--timesteps", "96", "--log-dir", str(stopped)]) == 143
    assert len(calls) == 80 + 30, "heard before the next minibatch"
    monkeypatch.setattr(PPOAgent, "gradient_step", step)
    run = stopped / "ppo" / "BallSumo-v0_1"
    saved = load_checkpoint(run / "interrupted_model.pt")
    # The model before the second update, its rollout full (64 steps: the second rollout's 32 in it).
    assert saved["agent"]["n_updates"] == 80 and saved["progress"]["num_timesteps"] == 64
    assert saved["run_state"]["agent"]["rollout"]["filled"] == 8
    resume = ["--resume", str(run), "--timesteps", "32", "--log-dir", str(stopped), "--no-progress"]
    assert run_cli(train.main, resume) == 0
    resumed = load_checkpoint(stopped / "ppo" / "BallSumo-v0_2" / "final_model.pt")
    whole = load_checkpoint(uninterrupted / "ppo" / "BallSumo-v0_1" / "final_model.pt")
    assert resumed["agent"]["n_updates"] == whole["agent"]["n_updates"] == 240
    for name, weights in whole["agent"]["q"].items():
        torch.testing.assert_close(resumed["agent"]["q"][name], weights, rtol=0, atol=0)


def test_a_pqn_update_stopped_between_minibatches_leaves_the_agent_as_it_was():
    from agents.algorithms.networks import network_spec
    from agents.common.configuration.hyperparameters import PQNConfig
    from agents.environments.steps import make_steps

    env = make_steps("UAVGrid-v0", {}, 3, 0, "native", None)
    spec = network_spec(env.observation_space, 9, "MultiInputPolicy", {"net_arch": [16], "layer_norm": True})
    agent = pqn.PQNAgent(spec, PQNConfig(rollout_steps=4, n_epochs=50, n_minibatches=2), "cpu")
    rollout, observation = agent.rollout_for(4, 3, env.observation_space), env.first_observations()
    for t in range(4):
        step = env.step(agent.play(rollout, t, observation, 0.5))
        rollout.rewards[t] = torch.as_tensor(step.rewards, dtype=torch.float32)
        observation = step.observations
    before = {name: tensor.clone() for name, tensor in agent.online.state_dict().items()}
    order = agent.kept.generator.get_state()
    asked = iter([False] * 7 + [True] * 1000)
    assert agent.learn_rollout(rollout, observation, lambda: next(asked)) is None
    assert all(torch.equal(before[name], tensor) for name, tensor in agent.online.state_dict().items())
    assert torch.equal(agent.kept.generator.get_state(), order) and agent.n_updates == 0
    assert agent.learn_rollout(rollout, observation, rollouts.never) is not None and agent.n_updates == 100
    env.close()
