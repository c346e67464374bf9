"""The teachers (agents.algorithms.teachers): a built-in player's, a state model's and a reference
policy's labels of the states the student's envs report."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.algorithms.distill import DistillConfig
from agents.algorithms.teachers import make_teacher, softmax
from agents.common.configuration.hyperparameters import TeacherGame
from agents.twoplayer.ratings import make_entrant_player, model_entrant
from ballenvs.duel.observe import state_of_view
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.roster import make_player
from tests.agents.algorithms.teaching import config, sumo_game


@pytest.mark.parametrize("side", [LEFT, RIGHT])
@pytest.mark.parametrize("name", ["planner", "pusher"])
def test_a_built_in_teachers_labels_are_its_own_actions_on_that_states_seat(name, side):
    duel = sumo_game(24)
    teacher = make_teacher(config(name), "cpu", 0)
    actions, targets = teacher.label(state_of_view(duel.view(side)))
    player = make_player(name, duel.physics, duel.rules)
    np.testing.assert_array_equal(actions, player.act(duel.seat(side, [np.random.default_rng(0)] * 24)))
    assert targets.shape == (24, 9)
    np.testing.assert_allclose(targets.sum(axis=1), 1.0, rtol=1e-6)
    if name == "pusher":  # actions only: one-hot
        np.testing.assert_array_equal(targets.argmax(axis=1), actions)
        assert set(np.unique(targets)) <= {0.0, 1.0}
    else:  # the planner's values: softmax(values / temperature), its action the likeliest
        _, values = player.act_with_values(duel.seat(side, [np.random.default_rng(0)] * 24))
        np.testing.assert_allclose(targets, softmax(values, 0.05), rtol=1e-6)
        np.testing.assert_array_equal(targets[np.arange(24), actions], targets.max(axis=1))


def test_a_models_labels_are_its_q_values_on_the_state(state_model):
    duel = sumo_game(16, seed=3)
    teacher = make_teacher(config(str(state_model), temperature=0.5), "cpu", 0)
    for side in (LEFT, RIGHT):
        states = duel.observe(side)  # what the state model sees of the game
        actions, targets = teacher.label(state_of_view(duel.view(side)))
        player = make_entrant_player(model_entrant(state_model), "cpu", "BallSumo-v0", {"obs_type": "state"})
        with torch.no_grad():
            q = player.q(torch.as_tensor(states)).numpy()
        np.testing.assert_array_equal(actions, q.argmax(axis=1))
        np.testing.assert_allclose(targets, softmax(q, 0.5), rtol=1e-5)


def test_uavs_greedy_labels_the_grids_with_its_own_actions_one_hot():
    import gymnasium as gym

    from ballenvs.uav.greedy import GreedyPolicy

    game = TeacherGame("UAVGridImage-v0", {"obs_type": "image", "state_info": True})
    teacher = make_teacher(DistillConfig(teacher="greedy", game=game), "cpu", 0)
    env = gym.make_vec("UAVGridImage-v0", 6, vectorization_mode="vector_entry_point", state_info=True)
    greedy = GreedyPolicy(env)
    _, info = env.reset(seed=2)
    for _ in range(60):
        actions, targets = teacher.label(info["state"])
        np.testing.assert_array_equal(actions, greedy.act())
        np.testing.assert_array_equal(targets, np.eye(9, dtype=np.float32)[actions])
        _, _, _, _, info = env.step(actions)


@pytest.mark.parametrize("teacher", ["planner", "planner:2/5/10/20"])
def test_a_planner_teacher_with_a_network_searches_with_it_in_the_learned_champions_place(teacher, state_model):
    """Expert iteration's teacher: the planner's labels, its branches meeting the network where
    they met the first champion (the scripts kept), its own holds kept."""
    duel = sumo_game(12, seed=5)
    labelled = make_teacher(config(teacher, teacher_network=str(state_model)), "cpu", 0)
    network = make_entrant_player(model_entrant(state_model), "cpu", "BallSumo-v0", {})
    planner = make_player(teacher, duel.physics, duel.rules)
    searching = planner.meeting(network)
    assert [type(model).__name__ for model in searching.models] == ["Chaser", "Pusher", "QPlayer"]
    assert searching.horizons == planner.horizons
    for side in (LEFT, RIGHT):
        actions, targets = labelled.label(state_of_view(duel.view(side)))
        expected, values = searching.act_with_values(duel.seat(side, [np.random.default_rng(0)] * 12))
        np.testing.assert_array_equal(actions, expected)
        np.testing.assert_allclose(targets, softmax(values, 0.05), rtol=1e-6)


@pytest.mark.parametrize(
    ("teacher", "network", "env", "message"),
    [
        ("pusher", "MODEL", "BallSumo-v0", "teacher 'pusher' is not a planner"),
        ("MODEL", "MODEL", "BallSumo-v0", "is a model"),
        ("planner", "nowhere", "BallSumo-v0", "teacher_network 'nowhere'"),
        ("planner", "MODEL", "BallDuel-v0", "plays 'BallSumo-v0'; this student plays BallDuel-v0"),
        ("planner", "CONFIG", "BallSumo-v0", "teacher_network '.*config.yml': model .* models are .pt files"),
    ],
)
def test_a_teacher_network_is_refused_where_no_planner_searches_with_it(teacher, network, env, message, state_model):
    from agents.common.errors import UsageError

    paths = {"MODEL": str(state_model), "CONFIG": str(state_model / "config.yml")}
    teacher, network = (paths.get(name, name) for name in (teacher, network))
    game = TeacherGame(env, {"obs_type": "state", "state_info": True})
    with pytest.raises(UsageError, match=message):
        make_teacher(DistillConfig(teacher=teacher, teacher_network=network, game=game), "cpu", 0)


def test_a_one_player_games_teacher_takes_no_network():
    from agents.common.errors import UsageError

    game = TeacherGame("UAVGridImage-v0", {"obs_type": "image", "state_info": True})
    with pytest.raises(UsageError, match="UAVGridImage-v0 has no planner"):
        make_teacher(DistillConfig(teacher="greedy", teacher_network="x", game=game), "cpu", 0)
