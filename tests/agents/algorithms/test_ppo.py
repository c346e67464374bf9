"""Our PPO (agents.algorithms.ppo): GAE by hand, actions sampled with the probabilities the ratio
needs, a run from nothing that evaluate plays and resume continues; from a start, the policy held
while the critic warms up, the start's play kept at the first step, the pull released on evidence."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from agents import train
from agents.algorithms import ppo
from agents.algorithms.finetune import FinetuneAgent, FinetuneConfig
from agents.algorithms.networks import QNetwork
from agents.evaluate import main as evaluate_main
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import run_cli
from agents.session.evaluation import Evaluation
from tests.agents.algorithms.teaching import STATE, fine_tuned
from tests.helpers import refused

#: The shipped section, small: the teaching tests' flags (seed 1, 4 envs, the cheap scripts as the
#: pool) with rollouts of 8 steps in place of DQN's buffer.
SMALL = [*STATE[: STATE.index("--hyperparams") + 1], "rollout_steps=8", "n_minibatches=2", STATE[-1]]


def agent_from(start, **keys) -> ppo.PPOAgent:
    state = load_checkpoint(start / "final_model.pt")
    return ppo.PPOAgent(state["spec"], ppo.PPOConfig(start_from=str(start), **keys), "cpu", seed=0)


def observations_of(agent: ppo.PPOAgent, n: int, seed: int) -> torch.Tensor:
    size = agent.spec["parts"][""]["size"]
    return torch.as_tensor(np.random.default_rng(seed).normal(size=(n, size)), dtype=torch.float32)


def space_of(agent: ppo.PPOAgent) -> spaces.Box:
    return spaces.Box(-np.inf, np.inf, (agent.spec["parts"][""]["size"],), np.float32)


def test_gae_by_hand():
    # Two envs, three steps. Env 0 terminates at step 1 (nothing follows it); env 1 is truncated at
    # step 1, where delta bootstraps on its real last observation's value (7), and A stops there.
    rewards = torch.tensor([[1.0, 0.0], [2.0, 1.0], [3.0, 1.0]])
    terminated = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    ended = torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    values = torch.tensor([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    next_values = torch.tensor([[1.0, 2.0], [9.0, 7.0], [4.0, 6.0]])
    advantages = ppo.gae(rewards, terminated, ended, values, next_values, gamma=0.5, gae_lambda=0.5)
    # Env 0: d2 = 3 + 2 - 1 = 4, A2 = 4; d1 = 2 - 1 = 1, A1 = 1 (ended); d0 = 1 + .5 - 1 = .5, A0 = .5 + .25 = .75.
    # Env 1: d2 = 1 + 3 - 2 = 2, A2 = 2; d1 = 1 + 3.5 - 2 = 2.5, A1 = 2.5 (ended); d0 = 0 + 1 - 2 = -1, A0 = -1 + .625.
    expected = torch.tensor([[0.75, -0.375], [1.0, 2.5], [4.0, 2.0]])
    torch.testing.assert_close(advantages, expected)
    one_step = ppo.gae(rewards, terminated, ended, values, next_values, gamma=0.5, gae_lambda=0.0)
    torch.testing.assert_close(one_step, rewards + 0.5 * (1 - terminated) * next_values - values)


def test_actions_are_sampled_from_the_policy_and_their_probability_is_the_one_that_played(start):
    agent = agent_from(start)
    rollout = agent.rollout_for(2, 256, space_of(agent))
    with torch.no_grad():  # a policy that plays action 8 or 7, half and half
        agent.actor.head[-1].weight.zero_()
        agent.actor.head[-1].bias.copy_(torch.tensor([-50.0] * 7 + [0.0, 0.0]))
    observations = observations_of(agent, 256, 0).numpy()
    actions = agent.play(rollout, 0, observations, epsilon=0.0)
    assert set(actions.tolist()) == {7, 8} and 0.35 < float(np.mean(actions == 8)) < 0.65
    torch.testing.assert_close(rollout.log_probs[0], torch.full((256,), float(np.log(0.5))))
    with torch.no_grad():
        torch.testing.assert_close(rollout.values[0], agent.critic(torch.as_tensor(observations)).squeeze(1))
    actions = agent.play(rollout, 1, observations, epsilon=0.5)  # half the actions uniform among 9
    expected = np.where(actions >= 7, np.log(0.5 * 0.5 + 0.5 / 9), np.log(0.5 / 9))
    torch.testing.assert_close(rollout.log_probs[1], torch.as_tensor(expected, dtype=torch.float32))
    assert (actions < 7).any()


def test_the_start_becomes_the_policy_it_plays(start):
    agent = agent_from(start)
    observations = observations_of(agent, 256, 1)
    start_q = QNetwork(agent.spec)
    start_q.load_state_dict(load_checkpoint(start / "final_model.pt")["agent"]["q"])
    with torch.no_grad():
        torch.testing.assert_close(agent.actor(observations), start_q(observations) / agent.config.pull_temperature)
        assert torch.equal(agent.start(observations), agent.actor(observations))


def test_while_the_critic_warms_up_the_policy_does_not_move(start):
    agent = agent_from(start, rollout_steps=8, n_epochs=2, n_minibatches=2, learning_rate=1e-3)
    rollout = agent.rollout_for(8, 16, space_of(agent))
    rng = np.random.default_rng(2)
    for t in range(8):
        rollout.actions[t] = torch.as_tensor(agent.play(rollout, t, observations_of(agent, 16, t).numpy(), 0.0))
        rollout.rewards[t] = torch.as_tensor(rng.normal(size=16), dtype=torch.float32)
    policy = [p.clone() for p in agent.actor.parameters()]
    critic = [p.clone() for p in agent.critic.parameters()]
    agent.calibrating = True
    agent.learn_rollout(rollout, observations_of(agent, 16, 9).numpy())
    assert all(torch.equal(a, b) for a, b in zip(policy, agent.actor.parameters(), strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(critic, agent.critic.parameters(), strict=True))
    agent.calibrating = False
    agent.learn_rollout(rollout, observations_of(agent, 16, 9).numpy())
    assert not all(torch.equal(a, b) for a, b in zip(policy, agent.actor.parameters(), strict=True))


def test_the_pull_draws_the_policy_back_to_the_starts(start):
    agent = agent_from(start, pull_weight=1.0, ent_coef=0.0, learning_rate=1e-3)
    with torch.no_grad():
        agent.actor.head[-1].bias.add_(torch.arange(9.0) * 20)  # moved away from the start
    observations = observations_of(agent, 256, 3)

    def disagreement() -> float:
        with torch.no_grad():
            return float((agent.actor(observations).argmax(1) != agent.start(observations).argmax(1)).float().mean())

    before = disagreement()
    actions, zeros = torch.zeros(256, dtype=torch.long), torch.zeros(256)
    for _ in range(200):  # advantages of 0: the pull alone moves the policy
        loss, _ = agent.policy_loss(observations, actions, zeros, zeros)
        agent.gradient_step(loss)
    assert before > 0.5 and disagreement() < before / 2


def test_the_pull_is_weighed_on_evaluations_as_finetunes_is(start):
    agent = agent_from(start, pull_weight=2.0, pull_release=0.5)
    finetuned = FinetuneAgent(agent.spec, FinetuneConfig(start_from=str(start), pull_weight=2.0, pull_release=0.5), "cpu")
    held, fell = Evaluation(1, 0.0, {"chaser": 0.9}), Evaluation(2, 0.0, {"chaser": 0.7})
    pulls = []
    for calibrating, evaluation in [(True, held), (True, fell), (False, held), (False, held), (False, fell)]:
        for weighed in (agent, finetuned):
            weighed.start_level, weighed.calibrating = Evaluation(0, 0.0, {"chaser": 0.9}), calibrating
            weighed.weigh(evaluation)
        assert agent.pull == finetuned.pull
        pulls.append(agent.pull)
    assert pulls == [2.0, 2.0, 1.0, 0.5, 1.0]
    resumed = agent_from(start)
    resumed.load_runtime_state(agent.runtime_state())
    assert resumed.pull == 1.0 and resumed.start_level == agent.start_level


def test_a_fine_tuning_run_evaluates_its_start_first_plays_it_and_logs_the_pull(start, tmp_path, capsys):
    run, _ = fine_tuned(tmp_path, "ppo", start, *SMALL, "calibration_steps=64")
    saved = load_checkpoint(run / "final_model.pt")
    assert saved["format"] == ppo.PPOAgent.FORMAT and set(saved["agent"]) >= {"q", "critic", "start"}
    capsys.readouterr()
    assert run_cli(evaluate_main, [str(run / "final_model.pt"), "--episodes", "2", "--deterministic"]) == 0
    assert "BallSumo-v0: 2 episodes, return" in capsys.readouterr().out


def test_a_run_from_nothing_writes_a_model_that_resume_continues(tmp_path):
    argv = ["--algo", "ppo", *SMALL, "--timesteps", "256", "--log-dir", str(tmp_path)]
    assert run_cli(train.main, argv) == 0
    run = tmp_path / "ppo" / "BallSumo-v0_1"
    state = load_checkpoint(run / "final_model.pt")
    assert "start" not in state["agent"] and state["progress"]["num_timesteps"] == 256
    assert run_cli(train.main, ["--resume", str(run), "--timesteps", "64", "--log-dir", str(tmp_path), "--no-progress"]) == 0
    resumed = load_checkpoint(tmp_path / "ppo" / "BallSumo-v0_2" / "final_model.pt")
    assert resumed["progress"]["num_timesteps"] == 320 and resumed["agent"]["n_updates"] > state["agent"]["n_updates"]


def test_tail_averaging_plays_the_mean_of_the_actors_weights_while_the_pool_faces_the_actor(start):
    agent = agent_from(start)
    agent.average_tail()  # the first fold: a copy of the actor
    first = [p.clone() for p in agent.actor.parameters()]
    with torch.no_grad():
        for p in agent.actor.parameters():
            p.add_(1.0)
    agent.average_tail()
    for mean, was, now in zip(agent.played.parameters(), first, agent.actor.parameters(), strict=True):
        torch.testing.assert_close(mean, (was + now) / 2)
    assert agent.snapshotted is agent.actor and agent.played is not agent.actor
    resumed = agent_from(start)
    resumed.load_state_dict(agent.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(resumed.played.parameters(), agent.played.parameters(), strict=True))


def test_the_kl_penalty_weight_follows_its_target_as_rllibs_does():
    assert ppo.adapted_kl_coef(0.2, kl=0.03, target=0.01) == pytest.approx(0.3)  # past twice the target
    assert ppo.adapted_kl_coef(0.2, kl=0.004, target=0.01) == pytest.approx(0.1)  # under half
    assert ppo.adapted_kl_coef(0.2, kl=0.01, target=0.01) == 0.2
    assert ppo.adapted_kl_coef(ppo.MAX_KL_COEF, kl=1.0, target=0.01) == ppo.MAX_KL_COEF


def test_the_kl_penalty_holds_the_policy_nearer_the_rollouts_and_its_weight_resumes(start):
    observations = None
    moved = {}
    for kl_coef in (0.0, 5.0):
        agent = agent_from(start, kl_coef=kl_coef, ent_coef=0.0, learning_rate=1e-3)
        agent.calibrating, agent.start, agent.pull = False, None, 0.0
        observations = observations_of(agent, 256, 4) if observations is None else observations
        with torch.no_grad():
            old = torch.log_softmax(agent.actor(observations), dim=1)
        actions = torch.arange(256) % 9
        advantages = torch.linspace(-1.0, 1.0, 256)
        for _ in range(30):
            loss, _ = agent.policy_loss(observations, actions, old.gather(1, actions[:, None]).squeeze(1), advantages)
            agent.gradient_step(loss)
        with torch.no_grad():
            now = torch.log_softmax(agent.actor(observations), dim=1)
        moved[kl_coef] = float((old.exp() * (old - now)).sum(1).mean())
        agent.kl_coef = 0.45
        resumed = agent_from(start, kl_coef=kl_coef)
        resumed.load_runtime_state(agent.runtime_state())
        assert resumed.kl_coef == 0.45
    assert moved[5.0] < moved[0.0] / 2


@pytest.mark.parametrize("kl_coef", [float("nan"), -1.0, 1e300, "0.2", True])
def test_a_tampered_kl_penalty_weight_is_refused_on_resume(start, kl_coef):
    agent = agent_from(start, kl_coef=0.2)
    state = {**agent.runtime_state(), "kl_coef": kl_coef}
    with pytest.raises(ValueError, match="state agent kl_coef: expected a number in"):
        agent_from(start, kl_coef=0.2).load_runtime_state(state)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (["kl_coef=-0.1"], "kl_coef"),
        (["kl_penalty_target=0"], "kl_penalty_target"),
        (["clip_range=0"], "clip_range"),
        (["gae_lambda=1.5"], "gae_lambda"),
        (["target_kl=-1"], "target_kl"),
        (["n_steps=8"], "n_steps"),
        (["n_minibatches=33"], "n_minibatches=33: more than a rollout holds (8 steps x 4 envs); valid: 1..32"),
        (["n_minibatches=99999999999999999999"], "n_minibatches=99999999999999999999 must be an integer >= 1, below 2^53"),
    ],
)
def test_bad_keys_are_refused_before_any_folder(keys, message, tmp_path, capsys):
    err = refused(capsys, train.main, ["--algo", "ppo", *SMALL, *keys, "--timesteps", "64", "--log-dir", str(tmp_path)])
    assert message in err
    assert not list(tmp_path.iterdir())


def test_a_start_that_does_not_fit_the_network_is_refused_before_any_folder(start, tmp_path, capsys):
    argv = ["--algo", "ppo", *SMALL, f"start_from={start}", "policy_kwargs=dict(net_arch=[64])", "--log-dir", str(tmp_path)]
    err = refused(capsys, train.main, argv)
    assert f"start_from {str(start)!r}: its network" in err and "is not this run's" in err
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="session")
def ppo_run(tmp_path_factory):
    """A short run of our PPO from a start, to tamper with (a copy: _tampered)."""
    from tests.helpers import shared_training

    argv = ["--algo", "ppo", *SMALL, "--timesteps", "128", "--no-progress"]
    return shared_training(tmp_path_factory, "ppo_run", train.main, argv, "ppo/BallSumo-v0_1")


#: The start's evaluation with a NaN win rate, as a tampered resume state holds it.
NAN_LEVEL = {"steps": 0, "mean_return": 0.0, "win_rates": {"chaser": float("nan")}}


def _tampered(run, tmp_path, change):
    from tests.helpers import copy_run

    copy = copy_run(run, tmp_path)
    model = copy / "final_model.pt"
    state = torch.load(model, weights_only=True)
    change(state)
    torch.save(state, model)
    return copy


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["agent"].pop("critic"), "its agent does not fit this run's ballenvs-custom-ppo/1: 'critic'"),
        (lambda s: s["agent"].pop("averaged"), "its tail mean counts 1 update(s) but its weights (averaged) are missing"),
        (lambda s: s["agent"]["critic"]["head.0.weight"].fill_(float("nan")), "agent critic head.0.weight holds NaN"),
        (lambda s: s["agent"]["optimizer"].pop("param_groups"), "its agent does not fit"),
        (lambda s: s["agent"]["critic"].update({"head.0.weight": torch.zeros(64, 11, 4000)}), "its agent does not fit"),
        (lambda s: s.update(format="ballenvs-custom-dqn/1"), "a ballenvs-custom-dqn/1 checkpoint, not this run's"),
        (lambda s: s["run_state"]["agent"].update(pull=float("nan")), "state agent pull: expected a number in [0, 0.1]"),
        (lambda s: s["run_state"]["agent"].update(pull=1e300), "state agent pull: expected a number in [0, 0.1]"),
        (lambda s: s["run_state"]["agent"].update(pull=-5.0), "state agent pull"),
        (lambda s: s["run_state"].pop("agent"), "state: lacks agent"),
        (
            lambda s: s["run_state"]["agent"].update(
                start_level={"steps": 0, "mean_return": 0.0, "win_rates": {"a": float("nan")}}
            ),
            "state agent start_level",
        ),
    ],
    ids=[
        "no-critic",
        "no-tail-mean",
        "nan-critic",
        "no-param-groups",
        "critic-shape",
        "dqn-format",
        "pull-nan",
        "pull-huge",
        "pull-negative",
        "no-agent-state",
        "level-nan",
    ],  # fmt: skip
)
def test_a_tampered_resume_is_refused_in_one_line_before_any_folder(ppo_run, tmp_path, capsys, change, message):
    run = _tampered(ppo_run, tmp_path / "copy", change)
    out = tmp_path / "out"
    argv = ["--resume", str(run), "--timesteps", "64", "--log-dir", str(out), "--no-progress"]
    assert message in refused(capsys, train.main, argv)
    assert not out.exists()


def test_a_model_holding_nan_is_refused_by_evaluate_and_as_a_start(ppo_run, tmp_path, capsys):
    run = _tampered(ppo_run, tmp_path / "copy", lambda s: s["agent"]["q"]["head.0.weight"].fill_(float("nan")))
    assert "holds NaN or infinite values" in refused(capsys, evaluate_main, [str(run / "final_model.pt")])
    argv = ["--algo", "ppo", *SMALL, f"start_from={run}", "--timesteps", "64", "--log-dir", str(tmp_path / "out")]
    assert "holds NaN or infinite values" in refused(capsys, train.main, argv)
