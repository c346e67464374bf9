"""benchmarks.floor: what a floor times, and how PQN's timed steps are rounded."""

from agents.common.hyperparameters import PQNConfig
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
