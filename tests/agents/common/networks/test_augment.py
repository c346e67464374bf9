"""Random shifts of sampled frames (DrQ) in both DQN trainers' minibatches, and the lean CNN both build."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import NatureCNN

from agents.algorithms.buffer import ReplayBuffer
from agents.algorithms.dqn import DQNAgent
from agents.algorithms.networks import QNetwork, network_spec
from agents.common.configuration.config import parse_kwargs
from agents.common.errors import UsageError
from agents.common.networks.augment import check_augmentation, draw_shifts, shift_images
from agents.common.networks.lean_cnn import LeanCNN, multiply_adds
from agents.sb3.buffers import RandomShiftReplayBuffer
from agents.sb3.sb3_dqn import dqn_kwargs

FRAMES = spaces.Box(0, 255, (2, 36, 36), np.uint8)


def test_a_shift_moves_the_image_and_repeats_its_edges():
    image = torch.arange(16, dtype=torch.uint8).reshape(1, 1, 4, 4)
    down_one = shift_images(image, np.array([[1, 0]]))
    assert down_one[0, 0].tolist() == [[0, 1, 2, 3], [0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    left_two = shift_images(image, np.array([[0, -2]]))
    assert left_two[0, 0].tolist() == [[2, 3, 3, 3], [6, 7, 7, 7], [10, 11, 11, 11], [14, 15, 15, 15]]
    assert torch.equal(shift_images(image, np.zeros((1, 2), dtype=np.int64)), image)
    assert down_one.dtype == torch.uint8


def test_every_channel_of_a_sample_moves_alike_and_samples_move_apart():
    images = torch.randint(0, 255, (2, 3, 6, 6), dtype=torch.uint8)
    shifted = shift_images(images, np.array([[1, -1], [-2, 0]]))
    for channel in range(3):
        assert torch.equal(shifted[0, channel, 1:, :-1], images[0, channel, :-1, 1:])
        assert torch.equal(shifted[1, channel, :-2], images[1, channel, 2:])


def test_shifts_are_seeded_and_within_the_pad():
    first, second = draw_shifts(np.random.default_rng(3), 500, 2), draw_shifts(np.random.default_rng(3), 500, 2)
    assert np.array_equal(first, second) and first.min() == -2 and first.max() == 2


def _filled_buffer() -> ReplayBuffer:
    buffer = ReplayBuffer(32, FRAMES, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(4):
        obs = rng.integers(0, 255, (8, *FRAMES.shape), dtype=np.uint8)
        buffer.add(obs, obs[:, ::-1].copy(), rng.integers(0, 4, 8), rng.random(8), np.zeros(8))
    return buffer


def test_our_dqn_shifts_observation_and_next_observation_alike_and_leaves_the_buffer_untouched():
    section_kwargs = {"augment_shift": 2, "learning_starts": 0}
    agent = DQNAgent(network_spec(FRAMES, 4, "CnnPolicy", {}), _custom_config(**section_kwargs), "cpu", seed=5)
    buffer = _filled_buffer()
    stored = buffer.observations[""].copy(), buffer.next_observations[""].copy()
    batch = buffer.sample(64)
    augmented = agent.augment(batch)
    assert augmented.observations.shape == batch.observations.shape and augmented.observations.dtype == torch.uint8
    shifts = draw_shifts(np.random.default_rng(5), 64, 2)  # the agent's generator, seeded as the agent
    assert torch.equal(augmented.observations, shift_images(batch.observations, shifts))
    assert torch.equal(augmented.next_observations, shift_images(batch.next_observations, shifts))
    assert not torch.equal(augmented.observations, batch.observations)
    assert np.array_equal(buffer.observations[""], stored[0]) and np.array_equal(buffer.next_observations[""], stored[1])
    assert torch.equal(augmented.actions, batch.actions) and torch.equal(augmented.rewards, batch.rewards)


def test_sb3s_buffer_shifts_both_observations_alike_seeded_and_keeps_what_it_stores():
    buffer = RandomShiftReplayBuffer(16, FRAMES, spaces.Discrete(4), n_envs=2, pad=1, n_steps=1)
    rng = np.random.default_rng(0)
    for _ in range(16):
        obs = rng.integers(0, 255, (2, *FRAMES.shape), dtype=np.uint8)
        buffer.add(obs, obs.copy(), rng.integers(0, 4, (2, 1)), rng.random(2), np.zeros(2), [{}, {}])
    stored = buffer.observations.copy()
    np.random.seed(7)
    samples = buffer.sample(32)
    np.random.seed(7)
    again = buffer.sample(32)
    assert torch.equal(samples.observations, again.observations), "numpy's seed, which SB3 sets, decides the shifts"
    assert samples.observations.shape == (32, *FRAMES.shape)
    # Each sample's next observation is its observation (stored alike), so alike shifts keep them equal.
    assert torch.equal(samples.observations, samples.next_observations)
    assert np.array_equal(buffer.observations, stored)
    plain = RandomShiftReplayBuffer(16, FRAMES, spaces.Discrete(4), n_envs=2, pad=0, n_steps=1)
    plain.observations, plain.next_observations, plain.pos, plain.full = buffer.observations, buffer.next_observations, 0, True
    np.random.seed(7)
    unshifted = plain.sample(32).observations
    assert not torch.equal(samples.observations, unshifted)


def test_augment_shift_reaches_sb3_as_our_buffer_with_the_sections_n_step_returns():
    kwargs = dqn_kwargs({"augment_shift": 3, "n_steps": 3, "gamma": 0.9}, FRAMES)
    assert "augment_shift" not in kwargs and kwargs["n_steps"] == 1
    assert kwargs["replay_buffer_class"] is RandomShiftReplayBuffer
    assert kwargs["replay_buffer_kwargs"] == {"pad": 3, "n_steps": 3, "gamma": 0.9}
    assert "replay_buffer_class" not in dqn_kwargs({"augment_shift": 0}, FRAMES)


def test_augmentation_of_observations_that_are_not_frames_is_refused():
    check_augmentation(0, spaces.Box(-1, 1, (3,), np.float32))
    with pytest.raises(UsageError, match="augment_shift=2 shifts image observations; .* use 0"):
        check_augmentation(2, spaces.Box(-1, 1, (3,), np.float32))


@pytest.mark.parametrize(("algo", "env_id"), [("dqn", "UAVGrid-v0"), ("custom", "UAVGrid-v0"), ("finetune", "BallSumo-v0")])
def test_every_trainer_refuses_augmentation_of_a_state_before_its_run_folder(tmp_path, capsys, algo, env_id):
    from agents.session.cli import run_cli
    from agents.train import main

    argv = ["--algo", algo, "--env", env_id, "--hyperparams", "augment_shift=2", "--log-dir", str(tmp_path)]
    assert run_cli(main, argv) == 2
    assert "augment_shift=2 shifts image observations" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_lean_cnn_is_built_alike_by_both_trainers_and_costs_a_quarter_of_the_nature_cnn():
    space = spaces.Box(0, 255, (4, 36, 36), np.uint8)
    policy_kwargs = parse_kwargs("policy_kwargs", "dict(features_extractor_class=LeanCNN, net_arch=[])")
    ours = QNetwork(network_spec(space, 9, "CnnPolicy", policy_kwargs))
    theirs = LeanCNN(space)
    assert [p.shape for p in ours.encoders["observation"].parameters()] == [p.shape for p in theirs.parameters()]
    frames = torch.zeros(2, *space.shape, dtype=torch.uint8)
    lean, nature = multiply_adds(ours, frames), multiply_adds(NatureCNN(space), frames.float())
    assert lean == 16 * 9 * 9 * 64 + 32 * 4 * 4 * 144 + 128 * 512 + 9 * 128
    assert lean * 3 < nature


def test_a_feature_extractor_the_custom_agents_do_not_build_is_refused():
    space = spaces.Box(0, 255, (4, 36, 36), np.uint8)
    with pytest.raises(UsageError, match="features_extractor_class='FlattenExtractor' is not built by the custom agents"):
        network_spec(space, 9, "CnnPolicy", {"features_extractor_class": "FlattenExtractor"})
    with pytest.raises(UsageError, match="features_dim must be an integer >= 1, got 0"):
        network_spec(
            space, 9, "CnnPolicy", {"features_extractor_class": LeanCNN, "features_extractor_kwargs": {"features_dim": 0}}
        )


def _custom_config(**values):
    from agents.common.configuration.hyperparameters import OurDQNConfig

    return OurDQNConfig(**values)


@pytest.mark.slow
@pytest.mark.parametrize("trainer", ["sb3_train", "custom_train"])
def test_a_lean_augmented_pixel_run_is_loaded_back_by_its_runs_own_loader(tmp_path, trainer):
    from agents import custom_train, sb3_train
    from agents.artifacts.models import find_model, load_run_model
    from agents.session.cli import run_cli
    from tests.helpers import REPO, TINY

    main = {"sb3_train": sb3_train.main, "custom_train": custom_train.main}[trainer]
    argv = ["--env", "BallSumo-v0", "--config", str(REPO / "zoo_configs" / "selfplay_pixels.yml"), "--timesteps", "256"]
    argv += ["--n-envs", "2", "--env-kwargs", "obs_size=36", "subpixel=true"]
    argv += ["--log-dir", str(tmp_path), "--hyperparams", "policy_kwargs=dict(features_extractor_class=LeanCNN)"]
    argv += ["augment_shift=2", *TINY[1:]]  # TINY's hyperparameters join these
    assert run_cli(main, argv) == 0
    model_path, run_dir = find_model(next(tmp_path.glob("*/BallSumo-v0_1")))
    policy, config = load_run_model(model_path, run_dir, "cpu")
    extractor = next(m for m in policy.q_net.modules() if isinstance(m, LeanCNN))
    assert extractor.features_dim == 128 and config["hyperparams"]["env_kwargs"]["subpixel"] is True
    frames = np.zeros((3, 4, 36, 36), np.uint8)
    actions, _ = policy.predict(frames, deterministic=True)
    assert actions.shape == (3,)
