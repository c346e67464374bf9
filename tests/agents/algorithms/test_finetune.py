"""Fine-tuning from a model that plays (agents.algorithms.finetune): while calibrating the start
plays and the targets bootstrap on its actions; the pull is released only by evaluations that hold
the start's level once calibration is over, and comes back at one that falls; a run evaluates its
start before its first step."""

from __future__ import annotations

import csv

import numpy as np
import torch

from agents import train
from agents.algorithms.finetune import FinetuneAgent, FinetuneConfig, holds
from agents.algorithms.networks import QNetwork
from agents.session.checkpoint import load_checkpoint, tensors_as_arrays
from agents.session.cli import run_cli
from agents.session.evaluation import Evaluation
from tests.agents.algorithms.teaching import STATE, fine_tuned
from tests.helpers import refused


def agent_from(start, **keys) -> FinetuneAgent:
    state = load_checkpoint(start / "final_model.pt")
    config = FinetuneConfig(start_from=str(start), **keys)
    return FinetuneAgent(state["spec"], config, "cpu", seed=0)


def test_an_evaluation_holds_the_starts_level_within_the_margin_against_every_opponent():
    level = Evaluation(0, 0.5, {"chaser": 0.9, "anchor": 1.0})
    assert holds(Evaluation(10, 0.1, {"chaser": 0.86, "anchor": 0.95}), level, 0.05)
    assert not holds(Evaluation(10, 0.9, {"chaser": 0.84, "anchor": 1.0}), level, 0.05)
    assert not holds(Evaluation(10, 0.9, {"chaser": 1.0}), level, 0.05)  # an opponent not played is not held
    against_the_champion = Evaluation(0, 0.5, {"chaser": 0.9, "champion": 0.6})  # a measure, never what trains
    assert holds(Evaluation(10, 0.5, {"chaser": 0.9, "champion": 0.0}), against_the_champion, 0.05)
    one_player = Evaluation(0, 20.0, {})
    assert holds(Evaluation(10, 19.0, {}), one_player, 0.05) and not holds(Evaluation(10, 18.9, {}), one_player, 0.05)


def test_while_calibrating_the_start_plays_and_the_targets_bootstrap_on_its_actions(start):
    agent = agent_from(start)
    with torch.no_grad():  # the online network moves away from the start, as updates would move it
        agent.q.head[-1].bias.copy_(torch.arange(9.0) * 100)
    observations = np.random.default_rng(0).normal(size=(64, agent.spec["parts"][""]["size"])).astype(np.float32)
    tensor = torch.as_tensor(observations)
    with torch.no_grad():
        start_actions, online_actions = agent.start(tensor).argmax(1).numpy(), agent.q(tensor).argmax(1).numpy()
        assert (online_actions == 8).all() and (start_actions != 8).any()
        agent.calibrating = True
        np.testing.assert_array_equal(agent.act(observations, 1.0), start_actions)  # held, exploration and all
        np.testing.assert_array_equal(agent.warm_up_actions(observations, 64), start_actions)
        torch.testing.assert_close(agent.next_action_values(tensor), agent.start(tensor))
        agent.calibrating = False
        np.testing.assert_array_equal(agent.act(observations, 0.0), online_actions)
        torch.testing.assert_close(agent.next_action_values(tensor), agent.q(tensor))  # Double DQN's


def test_the_pull_is_released_by_evaluations_that_hold_after_calibration_and_taken_back_by_those_that_fall(start):
    agent = agent_from(start, pull_weight=2.0, pull_release=0.5, pull_margin=0.05)
    agent.start_level = Evaluation(0, 0.0, {"chaser": 0.9, "pusher": 0.8})
    holding, falling = Evaluation(1, 0.0, {"chaser": 0.9, "pusher": 0.8}), Evaluation(2, 0.0, {"chaser": 0.7, "pusher": 0.8})
    agent.calibrating = True
    agent.weigh(holding)
    assert agent.pull == 2.0  # no release while the start plays
    agent.calibrating = False
    agent.weigh(holding)
    agent.weigh(holding)
    agent.weigh(holding)
    assert agent.pull == 0.25
    agent.weigh(falling)
    assert agent.pull == 0.5  # one release taken back
    for _ in range(3):
        agent.weigh(falling)
    assert agent.pull == 2.0  # and no more than the whole pull


def test_the_pull_draws_the_online_policy_back_to_the_starts(start):
    agent = agent_from(start, pull_weight=1.0, learning_rate=1e-3)
    with torch.no_grad():
        agent.q.head[-1].bias.add_(torch.arange(9.0))  # moved away from the start
    observations = torch.as_tensor(np.random.default_rng(1).normal(size=(256, agent.spec["parts"][""]["size"])))
    observations = observations.float()

    def disagreement() -> float:
        with torch.no_grad():
            return float((agent.q(observations).argmax(1) != agent.start(observations).argmax(1)).float().mean())

    before = disagreement()
    agent.td_loss = lambda batch, q_values=None: torch.zeros(())  # the pull alone
    for _ in range(200):
        agent.gradient_step(agent.loss(type("Batch", (), {"observations": observations})()))
    assert before > 0.5 and disagreement() < before / 2


def test_a_run_evaluates_its_start_first_and_logs_the_pull(start, tmp_path):
    run, _ = fine_tuned(tmp_path, "finetune", start, *STATE, "calibration_steps=96")
    saved = load_checkpoint(run / "final_model.pt")
    assert saved["format"] == FinetuneAgent.FORMAT
    start_q = QNetwork(saved["spec"])
    start_q.load_state_dict(load_checkpoint(start / "final_model.pt")["agent"]["q"])
    for name, tensor in start_q.state_dict().items():  # the start rides along, unchanged
        torch.testing.assert_close(saved["agent"]["start"][name], tensor)


def test_a_run_needs_a_start_that_fits_its_network_and_is_refused_before_any_folder(start, tmp_path, capsys):
    flags = ["--timesteps", "128", "--log-dir", str(tmp_path)]  # past STATE's learning_starts: the start is what is refused
    err = refused(capsys, train.main, ["--algo", "finetune", *STATE, *flags])
    assert "start_from: name the model file or run folder to fine-tune" in err
    other_network = [f"start_from={start}", "policy_kwargs=dict(net_arch=[64])"]
    err = refused(capsys, train.main, ["--algo", "finetune", *STATE, *other_network, *flags])
    assert f"start_from {str(start)!r}: its network" in err and "is not this run's" in err
    assert not list(tmp_path.iterdir())


def test_a_pull_to_the_latest_held_moves_its_target_only_at_evaluations_that_hold(start):
    agent = agent_from(start, pull_to_latest_held=True, pull_release=1.0)
    agent.start_level = Evaluation(0, 0.0, {"chaser": 0.9})
    agent.calibrating = False
    observations = torch.as_tensor(np.random.default_rng(2).normal(size=(64, agent.spec["parts"][""]["size"]))).float()

    def moved_to(bias: float) -> None:
        with torch.no_grad():
            agent.q.head[-1].bias.copy_(torch.arange(9.0) * bias)

    moved_to(100.0)  # the online network now prefers action 8 everywhere
    agent.weigh(Evaluation(1, 0.0, {"chaser": 0.7}))  # fell: the target stays the start
    with torch.no_grad():
        torch.testing.assert_close(agent.pull_target(observations), agent.start(observations))
        agent.weigh(Evaluation(2, 0.0, {"chaser": 0.9}))  # held: the target is the network that held
        torch.testing.assert_close(agent.pull_target(observations), agent.q(observations))
        moved_to(-100.0)
        agent.weigh(Evaluation(3, 0.0, {"chaser": 0.5}))  # fell again: the target stays the last that held
        assert (agent.pull_target(observations).argmax(1) == 8).all()
        assert (agent.start(observations).argmax(1) != 8).any()  # the start itself never moves
    assert agent.pull == 1.0  # pull_release 1: never released
    restored = agent_from(start, pull_to_latest_held=True)
    restored.load_state_dict(agent.state_dict())  # resumed, the target is the one that held
    with torch.no_grad():
        assert (restored.pull_target(observations).argmax(1) == 8).all()


def test_the_start_plays_the_roll_in_of_every_game_and_the_learner_the_rest(start):
    agent = agent_from(start, roll_in_steps=10)
    agent.calibrating = False
    with torch.no_grad():
        agent.q.head[-1].bias.copy_(torch.arange(9.0) * 100)  # the learner plays action 8 everywhere
    observations = np.random.default_rng(3).normal(size=(4, agent.spec["parts"][""]["size"])).astype(np.float32)
    with torch.no_grad():
        start_actions = agent.start(torch.as_tensor(observations)).argmax(1).numpy()
    agent.game_steps = np.array([0, 9, 10, 50])
    np.testing.assert_array_equal(agent.act(observations, 0.0), [*start_actions[:2], 8, 8])


def test_the_roll_in_shortens_at_evaluations_that_hold_and_lengthens_back_at_those_that_fall(start):
    agent = agent_from(start, roll_in_steps=80, roll_in_release=0.5, pull_release=1.0)  # the pull stays whole
    agent.start_level = Evaluation(0, 0.0, {"chaser": 0.9})
    holding, falling = Evaluation(1, 0.0, {"chaser": 0.9}), Evaluation(2, 0.0, {"chaser": 0.5})
    agent.calibrating = True
    agent.weigh(holding)
    assert agent.roll_in == 80  # not while the start plays whole games
    agent.calibrating = False
    for _ in range(3):
        agent.weigh(holding)
    assert agent.roll_in == 10
    agent.weigh(falling)
    assert agent.roll_in == 20
    for _ in range(5):
        agent.weigh(falling)
    assert agent.roll_in == 80  # no longer than at the start
    assert agent.pull == agent.config.pull_weight
    resumed = agent_from(start, roll_in_steps=80)
    agent.game_steps = np.array([3, 0, 99])
    resumed.load_runtime_state(agent.runtime_state())
    assert resumed.roll_in == 80 and resumed.game_steps.tolist() == [3, 0, 99]


def test_a_run_with_a_roll_in_counts_each_games_steps_and_logs_the_roll_in(start, tmp_path):
    argv = [
        "--algo",
        "finetune",
        *STATE,
        f"start_from={start}",
        "calibration_steps=0",
        "roll_in_steps=30",
        "roll_in_release=0.5",
    ]
    argv += ["--timesteps", "256", "--eval-freq", "128", "--eval-episodes", "2", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "finetune" / "BallSumo-v0_1"
    with open(run / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    logged = {float(r["train/roll_in_steps"]) for r in rows if r.get("train/roll_in_steps")}
    assert logged and logged <= {30.0, 15.0, 7.5}  # logged, and halved only at evaluations
    saved = load_checkpoint(run / "final_model.pt")["run_state"]
    lengths = tensors_as_arrays(saved["envs"]["lengths"])  # the envs' own count of each game's steps
    assert saved["agent"]["game_steps"] == lengths.tolist()
