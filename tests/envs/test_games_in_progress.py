"""Games saved in progress: a vector env made with the same arguments and given another's
``get_state()`` goes on exactly as that one does (observations, rewards, flags, infos), through
resets, in every autoreset mode; a state that does not fit is a ValueError naming what."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import ballenvs  # noqa: F401  (registers the ids)

N_ENVS = 5
#: Every game, and the opponents that remember between steps or draw from generators.
CASES = [
    ("BallDuel-v0", {}),
    ("BallDuel-v0", {"opponent": "sprinter", "state_info": True}),
    ("BallDuel-v0", {"opponent": "random"}),
    ("BallSumo-v0", {"opponent": "planner", "obs_type": "pixels", "obs_size": 36, "subpixel": True}),
    ("UAVGrid-v0", {"random_layout": True, "random_start": True}),
    ("UAVGridImage-v0", {}),
]
MODES = [gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP]


def make(env_id: str, mode, **options):
    return gym.make_vec(env_id, N_ENVS, vectorization_mode="vector_entry_point", autoreset_mode=mode, **options)


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, np.ndarray) and a.dtype == object:
        return all(same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("env_id", "options"), CASES)
def test_an_env_given_anothers_state_goes_on_exactly_as_it_does(env_id, options, mode):
    played, restored = make(env_id, mode, **options), make(env_id, mode, **options)
    rng = np.random.default_rng(0)
    played.reset(seed=7)
    restored.reset(seed=1)  # other games and generators: the state replaces them all
    for _ in range(60):
        played.step(rng.integers(9, size=N_ENVS))
    restored.set_state(pickle.loads(pickle.dumps(played.get_state())))  # plain data, as a file holds it
    ended = 0
    for step in range(150):
        actions = rng.integers(9, size=N_ENVS)
        first, second = played.step(actions), restored.step(actions)
        assert all(same(a, b) for a, b in zip(first, second)), f"step {step} after the state"
        ended += int(np.count_nonzero(first[2] | first[3]))
    assert ended > 0 or env_id.startswith("UAV"), "the comparison went through resets"


def test_a_state_is_a_copy_the_env_does_not_change_afterwards():
    env = make("BallDuel-v0", MODES[0])
    env.reset(seed=0)
    state = env.get_state()
    kept = pickle.dumps(state)
    for _ in range(5):
        env.step(np.zeros(N_ENVS, dtype=np.int64))
    assert pickle.dumps(state) == kept


DUEL, GRID = ("BallDuel-v0", {"opponent": "sprinter"}), ("UAVGrid-v0", {})


@pytest.mark.parametrize(
    ("game", "change", "named"),
    [
        (DUEL, lambda s: s["game"]["duel"]["balls"].__setitem__(0, np.zeros(3)), "duel lx"),
        (DUEL, lambda s: s["game"]["duel"].__setitem__("steps", np.zeros(N_ENVS)), "duel steps"),  # float, not int64
        (DUEL, lambda s: s["rngs"].pop(), "rngs"),
        (DUEL, lambda s: s["rngs"].__setitem__(0, {"bit_generator": "MT19937"}), r"rngs\[0\]: not a state of a PCG64"),
        (DUEL, lambda s: s.pop("ended"), "lacks ended"),
        (DUEL, lambda s: s["game"]["opponent"].__setitem__("age", "old"), "sprinter age"),
        # A grid state that fits in shape but points past the rules: cells, classes, the block's row.
        (GRID, lambda s: s["game"]["_next_step"].__setitem__(0, 10**9), r"_next_step: expected values in \[0, 300\]"),
        (GRID, lambda s: s["game"]["steps"].__setitem__(0, -1), r"steps: expected values in \[0, "),
        (GRID, lambda s: s["game"]["grid"][0].__setitem__(0, 100), r"grid uav_x: expected values in \[0, 99\]"),
        (GRID, lambda s: s["game"]["grid"][4].__setitem__((0, 0), 7), r"grid request: expected values in \[0, 3\]"),
        (GRID, lambda s: s["game"]["_raised"].__setitem__((0, 0, 0), -2), r"_raised: expected values in \[0, 3\]"),
    ],
)
def test_a_state_that_does_not_fit_is_refused_naming_what(game, change, named):
    env_id, options = game
    source, target = (make(env_id, MODES[0], **options) for _ in range(2))
    source.reset(seed=0)
    source.step(np.zeros(N_ENVS, dtype=np.int64))
    state = source.get_state()
    change(state)
    with pytest.raises(ValueError, match=named):
        target.set_state(state)


def test_another_games_state_is_refused():
    duel, grid = make("BallDuel-v0", MODES[0]), make("UAVGrid-v0", MODES[0])
    grid.reset(seed=0)
    with pytest.raises(ValueError, match="lacks duel"):
        duel.set_state(grid.get_state())
