"""Our DQN: TD targets, replay buffer, target updates, epsilon, checkpoints, resume, learning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from agents import custom_train
from agents.algorithms.buffer import ReplayBuffer
from agents.algorithms.dqn import DQNAgent, gradient_steps_per_train, td_targets
from agents.algorithms.networks import network_spec
from agents.algorithms.policy import QNetworkPolicy, load_policy
from agents.artifacts.runs import read_config
from agents.common.configuration.config import ConfigError, build_section
from agents.common.configuration.hyperparameters import OurDQNConfig
from agents.common.configuration.registry import ALGORITHMS
from agents.common.errors import UsageError
from agents.environments.steps import real_next_observations
from agents.session.checkpoint import load_checkpoint, restore_agent, save_checkpoint
from agents.session.cli import run_cli
from agents.session.evaluation import evaluate
from agents.session.progress import Progress, linear_epsilon
from ballenvs.uav.reference import episode_returns
from tests import n_step_case
from tests.helpers import FAST, assert_run_layout, saved_mean_played


def test_td_target_stops_at_termination_and_bootstraps_otherwise():
    rewards = torch.tensor([1.0, 1.0])
    terminated = torch.tensor([1.0, 0.0])
    next_q = torch.tensor([[5.0, 3.0], [2.0, 4.0]])
    assert torch.allclose(td_targets(rewards, terminated, 0.9, next_q), torch.tensor([1.0, 1.0 + 0.9 * 4.0]))


def test_double_dqn_evaluates_the_online_argmax_with_the_target_net():
    next_target = torch.tensor([[5.0, 3.0]])
    next_online = torch.tensor([[0.0, 1.0]])  # online prefers action 1
    target = td_targets(torch.tensor([0.0]), torch.tensor([0.0]), 1.0, next_target, next_online)
    assert target.item() == 3.0  # not max(5, 3)


def test_truncated_transitions_keep_their_true_next_observation():
    next_obs = np.array([[0.0], [10.0], [20.0]])
    infos = [{}, {"terminal_observation": np.array([11.0])}, {}]
    real = real_next_observations(next_obs, np.array([False, True, False]), infos)
    assert real.ravel().tolist() == [0.0, 11.0, 20.0]
    assert next_obs.ravel().tolist() == [0.0, 10.0, 20.0]  # the reset observation is untouched
    dict_obs = {"a": np.zeros((2, 2)), "b": np.zeros((2, 3), dtype=np.int64)}
    infos = [{"terminal_observation": {"a": np.ones(2), "b": np.full(3, 2)}}, {}]
    real = real_next_observations(dict_obs, np.array([True, False]), infos)
    assert real["a"][0].tolist() == [1, 1] and real["b"][0].tolist() == [2, 2, 2] and real["a"][1].tolist() == [0, 0]


FRAME_SPACE = spaces.Box(0, 255, (2, 4, 4), np.uint8)


def add_steps(buffer, values):
    """One transition per value, with everything set to that value."""
    for value in values:
        obs = np.full((1, 2, 4, 4), value, dtype=np.uint8)
        buffer.add(obs, obs + 1, np.array([value]), np.array([float(value)]), np.array([value % 2 == 0]))


def test_buffer_wraps_around_overwriting_the_oldest():
    buffer = ReplayBuffer(5, FRAME_SPACE)
    add_steps(buffer, range(1, 8))
    assert len(buffer) == 5 and buffer.pos == 2
    assert buffer.actions.tolist() == [6, 7, 3, 4, 5]


def test_buffer_adds_a_vector_step_at_once():
    buffer = ReplayBuffer(4, FRAME_SPACE)
    obs = np.arange(3, dtype=np.uint8)[:, None, None, None] * np.ones((3, 2, 4, 4), dtype=np.uint8)
    buffer.add(obs, obs, np.array([0, 1, 2]), np.zeros(3), np.zeros(3))
    buffer.add(obs, obs, np.array([3, 4, 5]), np.zeros(3), np.zeros(3))
    assert buffer.actions.tolist() == [4, 5, 2, 3] and buffer.pos == 2 and len(buffer) == 4


def test_buffer_samples_only_written_slots_and_keeps_dtypes():
    buffer = ReplayBuffer(100, FRAME_SPACE, seed=0)
    add_steps(buffer, [7, 8, 9])
    batch = buffer.sample(200)
    assert set(batch.actions.tolist()) == {7, 8, 9}
    assert buffer.observations[""].dtype == np.uint8 and batch.observations.dtype == torch.uint8
    # Each sampled row is one consistent transition.
    assert torch.equal(batch.observations[:, 0, 0, 0].long(), batch.actions)
    assert torch.equal(batch.next_observations[:, 0, 0, 0].long(), batch.actions + 1)
    assert torch.equal(batch.terminated, (batch.actions % 2 == 0).float())


@pytest.mark.parametrize("capacity", [100, 7], ids=["room", "wrapped"])
def test_n_step_samples_sum_discounted_rewards_up_to_the_episode_end(capacity):
    n_steps, gamma = 3, 0.5
    buffer = ReplayBuffer(capacity, spaces.Box(0, 100, (1,), np.float32), seed=0, n_steps=n_steps, gamma=gamma)
    n_step_case.fill(buffer)
    batch = buffer.sample(300)
    n_step_case.check_sampled(batch, n_steps, gamma, batch.next_observations[:, 0], batch.terminated)
    if capacity == 7:  # 12 transitions written: the oldest kept is env 1's step 2
        assert set(batch.actions.tolist()) == {12, 3, 13, 4, 14, 5, 15}


def test_buffer_holds_dict_observations_and_round_trips_to_disk(tmp_path):
    space = spaces.Dict({"pos": spaces.Box(0, 1, (2,), np.float32), "requests": spaces.MultiDiscrete([4, 4, 4])})
    buffer = ReplayBuffer(10, space, seed=0)
    obs = {"pos": np.array([[0.5, 0.25]], dtype=np.float32), "requests": np.array([[1, 0, 3]])}
    buffer.add(obs, obs, np.array([2]), np.array([1.0]), np.array([0.0]))
    batch = buffer.sample(4)
    assert batch.observations["requests"].tolist() == [[1, 0, 3]] * 4
    buffer.save(tmp_path / "buffer.npz")
    restored = ReplayBuffer(10, space)
    restored.load(tmp_path / "buffer.npz")
    assert len(restored) == 1 and restored.observations["pos"][0].tolist() == [0.5, 0.25]


def test_sampling_an_empty_buffer_is_an_error():
    with pytest.raises(ValueError, match="empty replay buffer"):
        ReplayBuffer(3, FRAME_SPACE).sample(1)


def small_agent(**config):
    spec = network_spec(spaces.Box(-1, 1, (3,), np.float32), 4, "MlpPolicy", {"net_arch": [8]})
    return DQNAgent(spec, OurDQNConfig(**config), "cpu", seed=0)


def test_hard_target_update_copies_and_polyak_moves_part_way():
    agent = small_agent(tau=1.0)
    with torch.no_grad():
        for p in agent.q.parameters():
            p.add_(1.0)
    agent.update_target()
    assert all(torch.equal(a, b) for a, b in zip(agent.q.parameters(), agent.target.parameters()))
    soft = small_agent(tau=0.25)
    before = [p.clone() for p in soft.target.parameters()]
    with torch.no_grad():
        for p in soft.q.parameters():
            p.add_(4.0)
    soft.update_target()
    assert all(torch.allclose(t, b + 1.0) for t, b in zip(soft.target.parameters(), before))


def test_policy_averaging_plays_a_moving_average_of_the_online_network():
    from agents.algorithms.buffer import Batch

    plain = small_agent()
    assert plain.averaged is None and plain.played is plain.q  # off by default: the online network plays
    agent = small_agent(policy_averaging=0.25)
    start = [p.clone() for p in agent.q.parameters()]
    agent.update(Batch(torch.randn(8, 3), torch.randint(0, 4, (8,)), torch.randn(8), torch.randn(8, 3), torch.zeros(8)))
    for averaged, online, before in zip(agent.played.parameters(), agent.q.parameters(), start):
        assert not torch.equal(online, before)
        torch.testing.assert_close(averaged, 0.75 * before + 0.25 * online)
    restored = small_agent(policy_averaging=0.25)
    restored.load_state_dict(agent.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(restored.played.parameters(), agent.played.parameters()))


def test_a_run_with_policy_averaging_saves_the_average_as_the_model_it_plays(tmp_path):
    argv = ["--env", "UAVGrid-v0", "--n-envs", "2", "--timesteps", "300", "--eval-freq", "0", "--no-progress"]
    argv += ["--threads", "1", "--log-dir", str(tmp_path), "--hyperparams", "learning_starts=100", "buffer_size=500"]
    assert run_cli(custom_train.main, [*argv, "policy_averaging=0.01"]) == 0
    saved_mean_played(tmp_path / "custom" / "UAVGrid-v0_1")


def test_tail_averaging_plays_the_uniform_mean_of_the_online_networks_from_its_first_fold_on():
    agent = small_agent(tail_averaging=0.5)
    assert agent.averaged is None and agent.played is agent.q  # before the tail the online network plays
    seen = []
    for shift in (1.0, 2.0, 6.0):
        with torch.no_grad():
            for p in agent.q.parameters():
                p.add_(shift)
        seen.append([p.clone() for p in agent.q.parameters()])
        agent.average_tail()
    assert agent.tail_updates == 3 and agent.played is agent.averaged
    for i, averaged in enumerate(agent.played.parameters()):
        torch.testing.assert_close(averaged, sum(online[i] for online in seen) / 3)
    restored = small_agent(tail_averaging=0.5)
    restored.load_state_dict(agent.state_dict())
    assert restored.tail_updates == 3
    assert all(torch.equal(a, b) for a, b in zip(restored.played.parameters(), agent.played.parameters()))
    untouched = small_agent(tail_averaging=0.5)
    untouched.load_state_dict(small_agent(tail_averaging=0.5).state_dict())  # a checkpoint from before the tail
    assert untouched.averaged is None


def test_tail_averaging_and_policy_averaging_are_refused_together():
    with pytest.raises(ConfigError, match="policy_averaging=0.1 and tail_averaging=0.2"):
        OurDQNConfig(policy_averaging=0.1, tail_averaging=0.2)


def test_a_run_with_tail_averaging_saves_the_tails_mean_and_its_best_model_from_before_it(tmp_path):
    argv = ["--env", "UAVGrid-v0", "--n-envs", "2", "--timesteps", "400", "--eval-freq", "100", "--eval-episodes", "1"]
    argv += ["--no-progress", "--threads", "1", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "learning_starts=100", "buffer_size=500", "tail_averaging=0.25"]
    assert run_cli(custom_train.main, argv) == 0
    saved = saved_mean_played(tmp_path / "custom" / "UAVGrid-v0_1")
    assert saved["tail_updates"] == 400 // 4 // 2  # one fold an update over the last quarter, an update a vector step


def test_epsilon_falls_linearly_then_stays():
    values = [linear_epsilon(step, 1000, 1.0, 0.1, 0.5) for step in (0, 250, 500, 900)]
    assert values == pytest.approx([1.0, 0.55, 0.1, 0.1])
    assert linear_epsilon(10, 1000, 1.0, 0.1, 0.0) == 0.1


def test_linear_learning_rate_falls_to_zero_over_the_schedule():
    agent = small_agent(learning_rate="lin_1.0e-3")
    progress = Progress(num_timesteps=750, exploration_horizon=1000)
    assert agent.set_learning_rate(progress.progress_remaining()) == pytest.approx(2.5e-4)
    assert agent.optimizer.param_groups[0]["lr"] == pytest.approx(2.5e-4)
    assert small_agent(learning_rate=1e-3).set_learning_rate(0.25) == 1e-3  # a number stays constant
    with pytest.raises(ValueError, match="'lin_fast' is not a number or lin_<number>"):
        OurDQNConfig(learning_rate="lin_fast")


def test_update_lowers_the_loss_on_a_fixed_batch():
    agent = small_agent(learning_rate=1e-2, gamma=0.0)
    space = spaces.Box(-1, 1, (3,), np.float32)
    buffer = ReplayBuffer(16, space, seed=0)
    obs = np.random.default_rng(0).uniform(-1, 1, (16, 3)).astype(np.float32)
    buffer.add(obs, obs, np.arange(16) % 4, np.linspace(-1, 1, 16), np.ones(16))
    batch = buffer.sample(16)
    first = agent.update(batch).item()
    for _ in range(100):
        last = agent.update(batch).item()
    assert last < first / 4 and agent.n_updates == 101


def test_bad_config_values_are_named():
    schema = ALGORITHMS["custom"].schema
    raw = {"policy": "MlpPolicy", "n_timesteps": 10}
    with pytest.raises(ConfigError, match=r"train_freq=\[4, 'step'\] must be an integer >= 1"):
        build_section("UAVGrid-v0", raw, {"train_freq": [4, "step"]}, schema)
    with pytest.raises(ConfigError, match=r"tau=2 must be a number in \(0, 1\]"):
        build_section("UAVGrid-v0", raw, {"tau": 2}, schema)


def test_checkpoint_round_trip_restores_everything(tmp_path):
    agent = small_agent(learning_rate=1e-3)
    space = spaces.Box(-1, 1, (3,), np.float32)
    buffer = ReplayBuffer(8, space, seed=0)
    obs = np.zeros((8, 3), dtype=np.float32)
    buffer.add(obs, obs, np.zeros(8, dtype=np.int64), np.ones(8), np.zeros(8))
    agent.update(buffer.sample(8))
    progress = Progress(num_timesteps=1234, episodes=5, exploration_horizon=5000)
    save_checkpoint(tmp_path / "model.pt", agent, progress)
    assert not list(tmp_path.glob(".*tmp*"))
    restored, restored_progress = restore_agent(load_checkpoint(tmp_path / "model.pt"), agent.config, "cpu")
    assert restored_progress == progress and restored.n_updates == 1
    probe = torch.randn(5, 3)
    assert torch.equal(agent.q(probe), restored.q(probe)) and torch.equal(agent.target(probe), restored.target(probe))
    assert restored.optimizer.state_dict()["state"][0]["step"] == agent.optimizer.state_dict()["state"][0]["step"]
    policy = QNetworkPolicy(restored.q, 0.0, "cpu")
    actions, _ = policy.predict(probe.numpy(), deterministic=True)
    assert actions.tolist() == agent.q(probe).argmax(1).tolist()


def test_corrupt_and_foreign_checkpoints_are_refused(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(UsageError, match="cannot load checkpoint .*: not a weights-only tensor file"):
        load_checkpoint(tmp_path / "junk.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(UsageError, match="is not a custom agent's checkpoint"):
        load_checkpoint(tmp_path / "other.pt")


def test_policy_must_fit_the_observation_space():
    with pytest.raises(UsageError, match="policy 'CnnPolicy' does not fit"):
        network_spec(spaces.Box(-1, 1, (3,), np.float32), 4, "CnnPolicy", {})


@pytest.mark.parametrize("env_id,extra", [("BallDuel-v0", ["--env-kwargs", "max_episode_steps=150"]), ("UAVGrid-v0", [])])
def test_short_run_writes_the_same_layout_as_sb3(tmp_path, env_id, extra, capsys):
    argv = ["--env", env_id, "--timesteps", "600", "--n-envs", "2", "--log-dir", str(tmp_path), *FAST, *extra]
    assert run_cli(custom_train.main, argv) == 0
    run_dir = tmp_path / "custom" / f"{env_id}_1"
    assert_run_layout(run_dir, ".pt", (200, 400, 600))
    assert read_config(run_dir)["algo"] == "custom"
    assert load_checkpoint(run_dir / "final_model.pt")["progress"]["num_timesteps"] == 600


def test_resume_restores_steps_and_exploration_and_buffer(tmp_path, capsys):
    # UAVGrid's own learning rate is lin_2.5e-4: a resumed run must not train at rate 0.
    base = ["--env", "UAVGrid-v0", "--n-envs", "2", "--log-dir", str(tmp_path), *FAST]
    assert run_cli(custom_train.main, [*base, "--timesteps", "600", "--save-replay-buffer"]) == 0
    first = tmp_path / "custom" / "UAVGrid-v0_1"
    assert read_config(first)["hyperparams"]["learning_rate"].startswith("lin_")
    assert (
        run_cli(custom_train.main, ["--timesteps", "200", "--resume", str(first), "--log-dir", str(tmp_path), "--no-progress"])
        == 0
    )
    notes = capsys.readouterr().err
    assert "resumed from" in notes and "replay buffer restored: 600 transitions" in notes
    second = tmp_path / "custom" / "UAVGrid-v0_2"
    assert read_config(second)["env_id"] == "UAVGrid-v0" and read_config(second)["hyperparams"]["n_envs"] == 2
    state = load_checkpoint(second / "final_model.pt")
    before = load_checkpoint(first / "final_model.pt")
    assert state["progress"]["num_timesteps"] == 800
    # The schedules stretch over all 800 steps, as stable-baselines3's reset_num_timesteps=False.
    assert state["progress"]["exploration_horizon"] == 800 and before["progress"]["exploration_horizon"] == 600
    assert state["agent"]["n_updates"] > before["agent"]["n_updates"]
    moved = [not torch.equal(a, b) for a, b in zip(state["agent"]["q"].values(), before["agent"]["q"].values())]
    assert all(moved), "every layer learned in the resumed run"


SMALL_UAV = {
    "size": 16,
    "n_ues": 3,
    "coverage_radius": 2.5,
    "hotspot_spread": 1.0,
    "speed": 1,
    "max_episode_steps": 100,
    "request_prob": 0.05,
}


@pytest.mark.slow
def test_learns_a_small_uav_grid_better_than_random(tmp_path):
    env_kwargs = [f"{k}={v}" for k, v in SMALL_UAV.items()]
    argv = [
        "--env", "UAVGrid-v0", "--timesteps", "30000", "--n-envs", "4", "--vec-env", "dummy", "--seed", "0",
        "--log-dir", str(tmp_path), "--no-progress", "--eval-freq", "0", "--save-freq", "0",
        "--env-kwargs", *env_kwargs,
        "--hyperparams", "learning_starts=1000", "buffer_size=30000", "target_update_interval=1000",
        "policy_kwargs=dict(net_arch=[64, 64])", "exploration_fraction=0.2", "learning_rate=5.0e-4",
        "train_freq=1", "gamma=0.95",
    ]  # fmt: skip
    assert run_cli(custom_train.main, argv) == 0
    run_dir = tmp_path / "custom" / "UAVGrid-v0_1"
    config = read_config(run_dir)
    trained = evaluate(load_policy(run_dir / "final_model.pt", config), config, episodes=20, deterministic=True)
    random = episode_returns("random", 20, **SMALL_UAV)
    stay = episode_returns("stay", 20, **SMALL_UAV)
    assert np.mean(trained.returns) > 2 * random.mean()
    assert np.mean(trained.returns) > stay.mean() + 1.0


@pytest.mark.parametrize("capacity", [100, 7], ids=["room", "wrapped"])
def test_the_device_resident_buffer_samples_as_the_host_one(capacity, tmp_path):
    """The GPU path's buffer, run on the CPU: the same n-step transitions as the host buffer's."""
    from agents.algorithms.buffer import DeviceReplayBuffer

    n_steps, gamma = 3, 0.5
    buffer = DeviceReplayBuffer(capacity, spaces.Box(0, 100, (1,), np.float32), "cpu", seed=0, n_steps=n_steps, gamma=gamma)
    n_step_case.fill(buffer)
    batch = buffer.sample(300)
    seen = n_step_case.check_sampled(batch, n_steps, gamma, batch.next_observations[:, 0], batch.terminated)
    assert len(seen) == min(12, capacity)
    buffer.save(tmp_path / "buffer.npz")
    host = ReplayBuffer(capacity, spaces.Box(0, 100, (1,), np.float32), n_steps=n_steps, gamma=gamma)
    host.load(tmp_path / "buffer.npz")
    assert host.actions[: len(host)].tolist() == buffer.actions[: len(buffer)].tolist(), "the same file format"


def test_n_step_sums_are_one_computation_for_host_arrays_and_device_tensors():
    from agents.common.nstep_returns import n_step_returns

    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(500, 5)).astype(np.float32)
    ended = rng.random((500, 5)) < 0.2
    stored_after = rng.integers(0, 6, size=500)
    host = n_step_returns(rewards, ended, stored_after, 0.9)
    device = n_step_returns(torch.from_numpy(rewards), torch.from_numpy(ended), torch.from_numpy(stored_after), 0.9)
    assert all(isinstance(a, np.ndarray) for a in host) and all(isinstance(b, torch.Tensor) for b in device)
    for a, b in zip(host, device):
        np.testing.assert_array_equal(a, b.numpy())
    # By hand for one row: rewards summed up to the first episode end.
    row = int(np.flatnonzero(ended[:, 1] & ~ended[:, 0] & (stored_after >= 1))[0])
    assert host[0][row] == 1 and host[1][row] == np.float32(rewards[row, 0] + np.float32(0.9) * rewards[row, 1])


def test_gradient_steps_of_minus_one_mean_one_update_per_env_step_collected():
    # stable-baselines3's meaning, which the loop and the floor benchmark both read from here.
    assert gradient_steps_per_train(OurDQNConfig(train_freq=4, gradient_steps=-1), n_envs=8) == 32
    assert gradient_steps_per_train(OurDQNConfig(train_freq=4, gradient_steps=2), n_envs=8) == 2
