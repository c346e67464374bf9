"""benchmarks.outsiders: held-out players that play legal moves, one game or a batch."""

import numpy as np
import pytest

from ballenvs.directions import N_ACTIONS
from ballenvs.duel.physics import LEFT
from ballenvs.duel.two_player_game import TwoPlayerDuel
from benchmarks.outsiders import OUTSIDERS, main


@pytest.mark.parametrize("name", sorted(OUTSIDERS))
def test_each_outsider_plays_legal_actions_for_one_game_and_a_batch(name):
    for games in (None, 5):
        duel = TwoPlayerDuel(games, obs_type="state", time_limit_rule="nearer_centre", game_steps=100)
        rngs = [np.random.default_rng(i) for i in range(1 if games is None else games)]
        duel.reset(rngs)
        player = OUTSIDERS[name]()
        player.reset(None)
        for _ in range(20):
            actions = np.asarray(player.act(duel.seat(LEFT, rngs)))
            assert actions.shape == (() if games is None else (games,))
            assert ((actions >= 0) & (actions < N_ACTIONS)).all()
            duel.play(int(actions) if games is None else actions, 0 if games is None else np.zeros(games, dtype=np.int64))


def test_the_table_has_a_row_per_outsider_asked_for(capsys):
    rows = main(["chaser", "--games", "4", "--only", "rammer", "shover"])
    assert [row["outsider"] for row in rows] == ["rammer", "shover"]
    assert all(row["first_wins"] + row["second_wins"] + row["draws"] == 4 for row in rows)
    assert "| rammer |" in capsys.readouterr().out
