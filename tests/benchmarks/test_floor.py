"""benchmarks.floor: what a floor times, and how PQN's timed steps are rounded."""

from agents.common.configuration.hyperparameters import PQNConfig
from benchmarks.floor import dqn_floor, pqn_floor, section_of, whole_rollouts

SMALL_UAV = {"learning_starts": 0, "n_envs": 2}


def test_whole_rollouts_rounds_down_to_whole_rollouts_and_keeps_at_least_one():
    config = PQNConfig(rollout_steps=8)
    assert whole_rollouts(config, 4, 100) == 96
    assert whole_rollouts(config, 4, 10) == 32


def test_a_floor_timed_as_one_loop_does_not_time_its_pieces():
    section = section_of("UAVGrid-v0", "custom", SMALL_UAV)
    looped = dqn_floor(section, "cpu", env_steps=8)
    assert looped.steps_per_s > 0 and looped.act_s is None and looped.update_s is None
    pieces = dqn_floor(section, "cpu")
    assert pieces.act_s is not None and pieces.update_s is not None and pieces.steps_per_s > 0


def test_the_pqn_floor_times_its_sections_resolved_rollouts():
    section = section_of("UAVGrid-v0", "pqn", {"rollout_steps": 4, "n_envs": 4, "n_minibatches": 2, "n_epochs": 1})
    assert pqn_floor(section, "cpu", env_steps=1).act_s is None


def test_a_floor_names_its_networks_arithmetic_and_the_samples_it_learns_from_per_env_step():
    section = section_of("UAVGrid-v0", "custom", {**SMALL_UAV, "batch_size": 32, "train_freq": 2, "gradient_steps": 3})
    floor = dqn_floor(section, "cpu", env_steps=8)
    assert floor.samples_per_step == 32 * 3 / (2 * 2)
    assert floor.multiply_adds > 256 * 256, "the section's [256, 256] head at least"


def test_a_self_play_section_is_read_with_the_learners_spaces():
    section = section_of("BallSumo-v0", "custom")
    assert "opponent" not in section.env_kwargs and section.env_kwargs["obs_type"] == "state"
