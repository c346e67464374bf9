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


def test_a_trained_model_meets_the_outsiders_and_a_model_of_another_game_is_refused(sumo_run, capsys):
    """A model file or run folder of BallSumo-v0 plays the outsiders through its own observation (the
    tables name it by its run); on another game's rules it is one line, as is a name that is none."""
    from agents.common.errors import UsageError

    rows = main([str(sumo_run), "--games", "2", "--only", "cointoss", "--no-progress"])
    assert rows[0]["first_wins"] + rows[0]["second_wins"] + rows[0]["draws"] == 2
    assert "| custom/BallSumo-v0_1/final_model wins |" in capsys.readouterr().out
    with pytest.raises(UsageError, match="a model of BallSumo-v0, not of --env BallDuel-v0"):
        main([str(sumo_run / "final_model.pt"), "--env", "BallDuel-v0", "--games", "2"])
    with pytest.raises(UsageError, match="player 'nobody': not a built-in player"):
        main(["nobody", "--games", "2"])
