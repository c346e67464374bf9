"""``pixel_dtype="float32"``: every picture observation as float32 in [0, 1], the uint8 frame / 255,
in single, vector and PettingZoo envs; refused where there is no picture."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import ballenvs  # noqa: F401  (registers the ids)

PICTURES = [
    ("BallDuel-v0", {}),
    ("BallSumo-v0", {"obs_size": 36, "subpixel": True}),
    ("UAVGridImage-v0", {}),
    ("UAVGridImage-v0", {"channels_last": True}),
]


@pytest.mark.parametrize("env_id, options", PICTURES)
def test_float_frames_are_the_byte_frames_scaled_to_one(env_id, options):
    frames = gym.make(env_id, **options)
    floats = gym.make(env_id, pixel_dtype="float32", **options)
    assert floats.observation_space == gym.spaces.Box(0.0, 1.0, frames.observation_space.shape, np.float32)
    byte_frame, _ = frames.reset(seed=2)
    float_frame, _ = floats.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert float_frame.dtype == np.float32 and floats.observation_space.contains(float_frame)
        np.testing.assert_allclose(float_frame, byte_frame / 255.0, rtol=1e-6, atol=1e-7)
        action = int(rng.integers(9))
        byte_frame, *_ = frames.step(action)
        float_frame, _, terminated, truncated, _ = floats.step(action)
        if terminated or truncated:
            break


@pytest.mark.parametrize("env_id, options", PICTURES)
def test_the_vector_envs_float_frames_are_the_single_envs(env_id, options):
    vector = gym.make_vec(env_id, 3, vectorization_mode="vector_entry_point", pixel_dtype="float32", **options)
    single = gym.make(env_id, pixel_dtype="float32", **options)
    frames, _ = vector.reset(seed=5)
    frame, _ = single.reset(seed=5)
    assert frames.dtype == np.float32 and vector.observation_space.contains(frames)
    np.testing.assert_array_equal(frames[0], frame)


def test_the_pettingzoo_faces_frames_are_float_for_both_sides():
    pytest.importorskip("pettingzoo")
    from ballenvs.duel import parallel_env

    floats, frames = parallel_env(pixel_dtype="float32"), parallel_env()
    float_views, _ = floats.reset(seed=1)
    byte_views, _ = frames.reset(seed=1)
    for agent in ("left", "right"):
        assert floats.observation_space(agent).contains(float_views[agent])
        np.testing.assert_allclose(float_views[agent], byte_views[agent] / 255.0, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "env_id, options, message",
    [
        ("BallSumo-v0", {"obs_type": "state", "pixel_dtype": "float32"}, "pixel_dtype='float32' applies to picture"),
        ("UAVGrid-v0", {"pixel_dtype": "float32"}, "pixel_dtype='float32' applies to picture"),
        ("BallDuel-v0", {"pixel_dtype": "float64"}, "unknown pixel_dtype 'float64'; valid: 'uint8', 'float32'"),
        ("UAVGridImage-v0", {"pixel_dtype": np.float32}, "unknown pixel_dtype"),
    ],
)
def test_float_frames_without_a_picture_or_another_dtype_are_refused(env_id, options, message):
    with pytest.raises(ValueError, match=message):
        gym.make(env_id, **options)
