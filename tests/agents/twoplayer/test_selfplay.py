"""Self-play and the league: the snapshot pool, frame stacks as the learner sees them, Elo, and a
short real self-play run whose snapshots play a league."""

from __future__ import annotations

import csv
import importlib
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from agents.artifacts.runs import read_config
from agents.common.configuration.config import ConfigError, build_section
from agents.common.configuration.hyperparameters import SelfPlay
from agents.common.configuration.registry import ALGORITHMS
from agents.environments.frames import FrameStack
from agents.evaluate import main as evaluate_main
from agents.league import main as league_main
from agents.session.cli import run_cli
from agents.twoplayer.ratings import elo_errors, fit_elo, fit_elos, tables
from agents.twoplayer.selfplay import SelfPlayOpponent, SnapshotPool, apportioned, reassigned
from ballenvs.game import Player

STATE_GAMES = ["--env", "BallDuel-v0", "--env-kwargs", "obs_type=state", "max_episode_steps=60"]
STATE_GAMES += ["--hyperparams", "policy=MlpPolicy", "frame_stack=1", "learning_starts=100", "buffer_size=2000"]
TINY_PIXELS = ["--no-progress", "--eval-freq", "0", "--hyperparams", "learning_starts=100", "buffer_size=500"]


def test_the_pool_plays_the_latest_with_p_latest_else_one_of_the_last_window(tmp_path):
    learner = torch.nn.Linear(2, 3)
    opponent = SelfPlayOpponent(SelfPlay(p_latest=0.3, window=4), "cpu", 1, [])
    pool = SnapshotPool(SelfPlay(p_latest=0.3, window=4), tmp_path, learner, opponent, None, seed=0)
    assert pool.choose() is None, "no snapshot yet: the learner itself"
    for steps in range(100, 1100, 100):
        with torch.no_grad():
            learner.weight.fill_(steps)
        pool.snapshot(steps)
    assert [steps for steps, _ in pool.snapshots] == [700, 800, 900, 1000], "the window keeps the last 4"
    assert len(list(tmp_path.glob("snapshot_*_steps.pt"))) == 10, "every snapshot is written"
    choices = [pool.choose() for _ in range(20_000)]
    latest = np.mean([c is None for c in choices])
    counts = np.bincount([c for c in choices if c is not None], minlength=4) / len(choices)
    assert latest == pytest.approx(0.3, abs=0.015)
    assert counts == pytest.approx([0.7 / 4] * 4, abs=0.015)
    pool.rng = np.random.default_rng(1)
    while (choice := pool.choose()) is None:
        pass
    pool.rng = np.random.default_rng(1)
    pool.swap()
    assert pool.opponent_steps == pool.snapshots[choice][0]
    assert torch.all(opponent.q.weight == pool.opponent_steps), "the opponent plays that snapshot's weights"


def test_pfsp_draws_the_snapshots_the_learner_still_loses_to(tmp_path):
    settings = SelfPlay(p_latest=0.0, window=3, sampling="pfsp", pfsp_power=2.0)
    learner = torch.nn.Linear(2, 3)
    opponent = SelfPlayOpponent(settings, "cpu", 1, [])
    pool = SnapshotPool(settings, tmp_path, learner, opponent, None, seed=0)
    for steps in (100, 200, 300):
        pool.snapshot(steps)
    assert pool.weights() == pytest.approx([1 / 3] * 3), "no games yet: the prior makes them equal"
    for steps, scores in [(100, [-1.0] * 8), (200, [1.0] * 8), (300, [0.0] * 8)]:
        pool.opponent_steps = steps
        pool.record(np.array(scores))
    # the learner's score with the prior of one win and one loss: 1/10, 9/10, 5/10
    expected = np.array([0.9, 0.1, 0.5]) ** 2
    assert pool.weights() == pytest.approx(expected / expected.sum())
    counts = np.bincount([pool.choose() for _ in range(20_000)], minlength=3) / 20_000
    assert counts == pytest.approx(expected / expected.sum(), abs=0.015)
    opponent.finished(np.array([True, True]), np.array([1.0, 1.0]))  # the opponent (the snapshot) won both
    assert pool.scores[300] == [4.0, 10.0], "the opponent's results reach the pool as the learner's losses"


class _Remembering(Player):
    """A scripted player that keeps count of the times it was told to forget everything."""

    def __init__(self) -> None:
        self.forgotten = 0

    def act(self, seat):
        return np.zeros(len(seat.rngs), dtype=np.int64)

    def reset(self, games):
        self.forgotten += games is None


def test_pfsp_over_the_scripted_players_gives_the_games_to_those_the_learner_loses_to(tmp_path):
    """``scripted_sampling="pfsp"``: at a swap each scripted player keeps one game and the rest go
    by ``(1 - s) ** pfsp_power``; a player whose games change forgets their past; the tallies fade."""
    settings = SelfPlay(scripted_share=0.75, scripted="chaser,pusher,anchor", scripted_sampling="pfsp")
    players = [_Remembering() for _ in range(3)]
    opponent = SelfPlayOpponent(settings, "cpu", 1, players)
    pool = SnapshotPool(settings, tmp_path, torch.nn.Linear(2, 3), opponent, None, seed=0)
    assert [list(games) for games in opponent._scripted_games(16)] == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]]
    ended = np.zeros(16, dtype=bool)
    ended[:12] = True
    scores = np.where(np.arange(16) % 3 == 1, 1.0, -1.0)  # pusher wins its 4 games, the others lose theirs
    scores[2] = 0.0  # anchor draws one
    opponent.finished(ended, scores)
    assert opponent.scripted_scores.tolist() == [[4.0, 4.0], [0.0, 4.0], [3.5, 4.0]]
    figures = pool.on_step(0)  # the first swap is due at once
    # The learner's scores with a prior of one win and one loss, 5/6, 1/6 and 4.5/6, weigh (1 - s) ** 2:
    # the other 9 games' quotas 0.32, 7.96 and 0.72, the two largest remainders rounding up.
    assert opponent.scripted_shares() == {"chaser": 1, "pusher": 1 + 8, "anchor": 1 + 1}
    logged = {f"self_play/scripted_games_{name}": n for name, n in (("chaser", 1), ("pusher", 9), ("anchor", 2))}
    assert figures == logged, "logged at every swap"
    assert list(opponent._scripted_games(16)[0]) == [0], "chaser keeps its first game"
    assert [p.forgotten for p in players] == [1, 1, 1], "each player's games changed"
    assert opponent.scripted_scores.tolist() == [[2.0, 2.0], [0.0, 2.0], [1.75, 2.0]], "halved at every swap"
    saved = opponent.get_state()
    again = SelfPlayOpponent(settings, "cpu", 1, [_Remembering() for _ in range(3)])
    again.set_state(saved)
    assert again.scripted_shares() == opponent.scripted_shares()
    assert again.scripted_scores.tolist() == opponent.scripted_scores.tolist()
    turns = SelfPlayOpponent(SelfPlay(scripted_share=0.75, scripted="chaser,pusher,anchor"), "cpu", 1, players)
    turns_pool = SnapshotPool(turns.settings, tmp_path, torch.nn.Linear(2, 3), turns, None, seed=0)
    turns.finished(ended, scores)
    assert turns_pool.on_step(0) == {}, "nothing to log: the games never move"
    assert turns.scripted_shares() == {"chaser": 4, "pusher": 4, "anchor": 4}, "in turn, the shares never move"


def test_apportioned_gives_one_each_first_then_the_largest_remainders():
    assert apportioned(12, np.array([0.0, 1.0, 0.0, 0.0, 1.0])).tolist() == [1, 5, 1, 1, 4], "a tie to the first"
    assert apportioned(12, np.zeros(5)).tolist() == [3, 3, 2, 2, 2], "no weight at all: equal shares"
    assert apportioned(2, np.array([1.0, 4.0, 0.0])).tolist() == [0, 2, 0], "too few games for one each"
    assignment = reassigned(np.array([0, 1, 2, 0, 1, 2]), np.array([1, 4, 1]))
    assert assignment.tolist() == [0, 1, 2, 1, 1, 1], "each keeps its first games, the freed ones go to the short"


def test_self_play_settings_are_checked():
    # The zoo's string form, as a config file or --hyperparams writes it: the section reads it.
    raw = {"policy": "MlpPolicy", "n_timesteps": 10, "self_play": "dict(window=5, p_latest=0.25)"}
    section = build_section("BallSumo-v0", raw, {}, ALGORITHMS["custom"].schema)
    assert SelfPlay.from_config(section.self_play) == SelfPlay(window=5, p_latest=0.25)
    assert section.as_zoo_section()["self_play"] == {"window": 5, "p_latest": 0.25}, "config.yml records it read"
    with pytest.raises(ConfigError, match=r"self_play p_latest=2.0 must be a number in \[0, 1\]"):
        SelfPlay.from_config({"p_latest": 2.0})
    with pytest.raises(ConfigError, match="self_play key.*'horizon'|self_play key\\(s\\) horizon unknown"):
        SelfPlay.from_config({"horizon": 3})
    with pytest.raises(ConfigError, match="self_play scripted_sampling='loss'; valid: turns, pfsp"):
        SelfPlay.from_config({"scripted_sampling": "loss"})


def test_the_learners_copies_draw_from_their_softmax_with_sample_else_play_the_argmax(tmp_path):
    from ballenvs.backend import NUMPY
    from ballenvs.game import Seat

    games, logits = 20_000, torch.tensor([0.0, 1.0, 2.0])
    learner = torch.nn.Linear(2, 3)
    with torch.no_grad():  # the same logits for every observation
        learner.weight.zero_()
        learner.bias.copy_(logits)

    def played(acts: str, seed: int) -> np.ndarray:
        settings = SelfPlay(opponent_acts=acts)
        opponent = SelfPlayOpponent(settings, "cpu", 1, [])
        SnapshotPool(settings, tmp_path, learner, opponent, None, seed=0).swap()
        rngs = [np.random.default_rng(seed + k) for k in range(games)]
        return opponent.act(Seat(None, NUMPY, lambda: np.zeros((games, 2), np.float32), rngs))

    assert (played("greedy", 0) == 2).all()
    sampled = played("sample", 0)
    shares = np.bincount(sampled, minlength=3) / games
    assert shares == pytest.approx(torch.softmax(logits, 0).numpy(), abs=0.01)
    assert np.array_equal(played("sample", 0), sampled), "the games' own generators draw: the same seeds, the same actions"
    assert not np.array_equal(played("sample", 1), sampled)
    with pytest.raises(ConfigError, match="self_play opponent_acts='argmax'; valid: greedy, sample"):
        SelfPlay.from_config({"opponent_acts": "argmax"})


@pytest.mark.parametrize("shape", [(6, 5, 1), (4,)], ids=["image", "vector"])
def test_frame_stacks_are_those_stable_baselines3_gives_the_learner(shape):
    from stable_baselines3.common.vec_env.stacked_observations import StackedObservations

    n, k = 3, 4
    space = spaces.Box(0, 255, shape, np.uint8)
    theirs = StackedObservations(n, k, space, "last" if len(shape) == 3 else None)
    ours = FrameStack(k)
    rng = np.random.default_rng(0)
    observations = rng.integers(0, 255, (n, *shape), dtype=np.uint8)
    expected = theirs.reset(observations)
    ours.reset(None)
    got = ours.push(observations)
    for step in range(12):
        transpose = (lambda x: np.moveaxis(x, -1, 1)) if len(shape) == 3 else (lambda x: x)
        assert np.array_equal(got, transpose(expected)), step
        observations = rng.integers(0, 255, (n, *shape), dtype=np.uint8)
        dones = np.array([step % 5 == 4, False, step % 7 == 6])
        # SB3 resets a finished env's stack and puts the next episode's first observation in it.
        expected, _ = theirs.update(
            observations, dones, [{"terminal_observation": observations[i]} if d else {} for i, d in enumerate(dones)]
        )
        ours.reset(dones)
        got = ours.push(observations)


def test_elo_recovers_known_ratings():
    # A beats B 76 games in 100 (200 points, 400 * log10(76 / 24)); B beats C as often.
    results = np.zeros((3, 3, 3), dtype=np.int64)
    results[0, 1] = (76, 0, 24)
    results[1, 2] = (76, 0, 24)
    results[0, 2] = (91, 0, 9)  # 400 points: 1 / (1 + 10 ** -1) = 0.909
    ratings = fit_elo(*tables(results))
    assert ratings.mean() == pytest.approx(1000)
    assert ratings[0] - ratings[1] == pytest.approx(200, abs=6) and ratings[1] - ratings[2] == pytest.approx(200, abs=6)
    draws = np.zeros((2, 2, 3), dtype=np.int64)
    draws[0, 1] = (0, 10, 0)
    assert fit_elo(*tables(draws)) == pytest.approx([1000, 1000])
    errors = elo_errors(*tables(results), ratings)
    assert np.all((errors > 5) & (errors < 80)), errors


def test_a_league_of_perfect_records_has_finite_ratings_whose_errors_widen_with_fewer_games():
    """agents.league random chaser pusher champion --games 10 went to the stronger player every
    game: finite ratings in order, and errors that are not 0 and are wider than with more games."""

    def league(games: int) -> tuple[np.ndarray, np.ndarray]:
        results = np.zeros((4, 4, 3), dtype=np.int64)
        for i in range(4):
            for j in range(i + 1, 4):
                results[i, j] = (games, 0, 0)  # the player listed first always wins
        ratings = fit_elo(*tables(results))
        return ratings, elo_errors(*tables(results), ratings)

    ratings, errors = league(10)
    assert np.all(np.isfinite(ratings)) and np.all(np.diff(ratings) < 0) and np.all((errors > 0) & np.isfinite(errors))
    shares = np.zeros((2, 2, 3), dtype=np.int64)
    shares[0, 1] = (7, 0, 3)
    few = elo_errors(*tables(shares), fit_elo(*tables(shares)))
    many = elo_errors(*tables(shares * 10), fit_elo(*tables(shares * 10)))
    assert np.all(few > 2 * many), (few, many)


def test_elo_stays_finite_for_a_player_who_won_every_game():
    results = np.zeros((2, 2, 3), dtype=np.int64)
    results[0, 1] = (20, 0, 0)
    ratings = fit_elo(*tables(results))
    assert np.all(np.isfinite(ratings)) and ratings[0] > ratings[1] + 300


def test_leagues_fitted_at_once_are_each_fitted_as_alone():
    """The bootstrap fits its leagues in one batch: each league's ratings are those it gets alone,
    bit for bit, whether it settles in a few updates or in many (a player who won every game)."""
    rng = np.random.default_rng(5)
    leagues = []
    for _ in range(12):
        results = np.zeros((4, 4, 3), dtype=np.int64)
        for i in range(4):
            for j in range(i + 1, 4):
                results[i, j] = rng.multinomial(int(rng.integers(1, 9)), [0.5, 0.1, 0.4])
        if rng.random() < 0.3:
            results[0] = (0, 0, 0)
            results[0, 1:] = (5, 0, 0)  # won every game it played
        leagues.append(tables(results))
    scores, games = (np.stack(parts) for parts in zip(*leagues))
    together = fit_elos(scores, games)
    for k, (league_scores, league_games) in enumerate(leagues):
        assert np.array_equal(together[k], fit_elo(league_scores, league_games))


@pytest.mark.parametrize("trainer_name", ["custom_train", "sb3_train"])
def test_a_short_self_play_run_writes_snapshots_that_play_a_league(trainer_name, tmp_path, capsys):
    trainer = importlib.import_module(f"agents.{trainer_name}")
    argv = [
        "--opponent",
        "self",
        "--timesteps",
        "1200",
        "--n-envs",
        "8",
        "--log-dir",
        str(tmp_path),
        "--no-progress",
        *STATE_GAMES,
    ]
    argv += [
        "self_play=dict(snapshot_steps=400, swap_steps=200, window=2, scripted_share=0.25)",
        "--eval-freq",
        "600",
        "--eval-episodes",
        "2",
    ]
    assert run_cli(trainer.main, argv) == 0
    out = capsys.readouterr().out
    assert "eval at 600 steps:" in out and "vs chaser" in out and "vs pusher" in out
    run = next(tmp_path.glob("*/BallDuel-v0_1"))
    assert read_config(run)["opponent"] == "self"
    snapshots = sorted(p.name for p in (run / "snapshots").iterdir())
    assert snapshots == ["snapshot_1200_steps.pt", "snapshot_400_steps.pt", "snapshot_800_steps.pt"]
    header = (run / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"eval/win_rate_vs_chaser", "eval/win_rate_vs_pusher"} <= set(header), "win rates against the scripts are logged"
    assert (
        run_cli(evaluate_main, [str(run), "--opponent", str(run / "snapshots" / "snapshot_400_steps.pt"), "--episodes", "2"])
        == 0
    )
    assert run_cli(league_main, [str(run), "chaser", "--games", "4", "--log-dir", str(tmp_path)]) == 0
    folder = tmp_path / "league" / "league_1"
    with open(folder / "league.csv") as file:
        rows = list(csv.DictReader(file))
    assert {row["player"] for row in rows} == {
        f"{run.parent.name}/BallDuel-v0_1@{s}" for s in ("400", "800", "1200", "final")
    } | {"chaser"}
    assert all(float(row["elo_std"]) >= 0 for row in rows) and (folder / "elo.png").stat().st_size > 1000
    assert "| rank | player | Elo |" in (folder / "report.md").read_text()


def test_self_play_needs_an_opponent_and_the_native_vector_env(tmp_path, capsys):
    from agents import custom_train

    for argv, message in [
        (["--env", "UAVGrid-v0", "--opponent", "self"], "--opponent self: UAVGrid-v0 has no opponent to replace"),
        (["--opponent", "self", "--vec-env", "dummy"], "--opponent self plays in the trainer's process: use --vec-env native"),
        (["--opponent", "self", "--hyperparams", "self_play=dict(window=0)"], "self_play window=0 must be an integer >= 1"),
        # Checked when the run plays another too: its config.yml records them (a class there could not be written).
        (["--opponent", "chaser", "--hyperparams", "self_play=dict(window=nn.ReLU)"], "self_play window=<class"),
        (
            ["--opponent", "bully"],
            "unknown opponent 'bully' for BallDuel-v0; valid: still, random, chaser, pusher, anchor, sprinter, champion, "
            "dqn_champion, ppo_champion, planner, self",
        ),
    ]:
        assert run_cli(custom_train.main, [*argv, "--log-dir", str(tmp_path)]) == 2
        assert message in capsys.readouterr().err
    assert not any(Path(tmp_path).rglob("config.yml"))


def test_v1_self_play_with_pfsp_and_every_script_ships_a_champion(tmp_path, capsys):
    """The issue's recipe, in miniature: self-play on BallSumo-v0 with PFSP and the scripted
    players, evaluated against every built-in, exported as a numpy champion that chooses the
    model's actions."""
    from agents import custom_train
    from agents.algorithms.networks import QNetwork
    from agents.export_champion import main as export_main
    from agents.session.checkpoint import load_checkpoint
    from ballenvs.duel.champion import q_values

    scripted = "chaser,pusher,anchor,sprinter"
    argv = ["--env", "BallSumo-v0", "--opponent", "self", "--timesteps", "1200", "--n-envs", "8"]
    argv += ["--log-dir", str(tmp_path), "--no-progress", "--eval-freq", "1200", "--eval-episodes", "2"]
    argv += ["--hyperparams", "policy=MlpPolicy", "learning_starts=100", "buffer_size=2000"]
    argv += ["policy_kwargs=dict(net_arch=[16])"]
    pool = f"snapshot_steps=400, swap_steps=200, sampling='pfsp', scripted_share=0.5, scripted='{scripted}'"
    argv += [f"self_play=dict({pool}, scripted_sampling='pfsp')"]
    assert run_cli(custom_train.main, argv) == 0
    out = capsys.readouterr().out
    assert all(f"vs {name}" in out for name in scripted.split(","))
    run = next(tmp_path.glob("custom/BallSumo-v0_1"))
    with open(run / "progress.csv") as progress:
        held = [row for row in csv.DictReader(progress) if row.get("self_play/scripted_games_pusher")]
    assert held, "the scripted players' games are logged"
    assert all(sum(float(row[f"self_play/scripted_games_{name}"]) for name in scripted.split(",")) == 4 for row in held)
    assert run_cli(evaluate_main, [str(run), "--opponent", "all", "--episodes", "4"]) == 0
    table = capsys.readouterr().out
    assert all(f"| {name} " in table for name in ("random", *scripted.split(","), "champion"))
    out_file = tmp_path / "champion.npz"
    assert run_cli(export_main, [str(run), "--out", str(out_file)]) == 0
    with np.load(out_file, allow_pickle=False) as data:
        layers = tuple((data[f"weight_{k}"], data[f"bias_{k}"]) for k in range(int(data["layers"])))
    state = load_checkpoint(run / "final_model.pt")
    network = QNetwork(state["spec"])
    network.load_state_dict(state["agent"]["q"])
    probe = np.random.default_rng(1).uniform(-1, 1, size=(256, 11)).astype(np.float32)
    with torch.no_grad():
        assert np.array_equal(q_values(layers, probe).argmax(1), network(torch.from_numpy(probe)).argmax(1).numpy())


def test_the_champion_is_a_state_model_of_v1(tmp_path, capsys):
    from agents import custom_train
    from agents.export_champion import main as export_main

    argv = ["--env", "BallDuel-v0", "--timesteps", "200", "--log-dir", str(tmp_path), *TINY_PIXELS]
    assert run_cli(custom_train.main, argv) == 0
    run = next(tmp_path.glob("custom/BallDuel-v0_1"))
    capsys.readouterr()
    assert run_cli(export_main, [str(run), "--out", str(tmp_path / "c.npz")]) == 2
    assert "the champion is an MLP on BallSumo-v0's state vector" in capsys.readouterr().err
    assert not (tmp_path / "c.npz").exists()


def test_self_play_can_face_a_search_exploiter_of_the_learner(tmp_path):
    """``exploiter`` in the scripted list: the game's lookahead, planning against the learner's own
    network (bound once the learner exists), plays its share of the games."""
    import torch

    from agents.common.configuration.hyperparameters import SelfPlay
    from agents.twoplayer.selfplay import SnapshotPool, make_opponent
    from ballenvs.duel.search import Lookahead

    settings = SelfPlay.from_config({"scripted_share": 0.5, "scripted": "pusher,exploiter"})
    opponent = make_opponent(settings, "BallSumo-v0", {"obs_type": "state"}, None, "cpu")
    exploiter = opponent.scripted[1]
    assert isinstance(exploiter, Lookahead) and exploiter.model.q is None
    learner = torch.nn.Sequential(torch.nn.Linear(11, 9))
    SnapshotPool(settings, tmp_path / "snapshots", learner, opponent, {}, seed=0)
    assert exploiter.model.q is learner
    from agents import custom_train

    argv = ["--env", "BallSumo-v0", "--timesteps", "400", "--n-envs", "4", "--log-dir", str(tmp_path), "--no-progress"]
    argv += [
        "--eval-freq",
        "0",
        "--hyperparams",
        "learning_starts=100",
        "buffer_size=1000",
        "policy_kwargs=dict(net_arch=[16])",
    ]
    argv += ["self_play=dict(snapshot_steps=200, swap_steps=100, scripted_share=0.5, scripted='exploiter')"]
    assert run_cli(custom_train.main, argv) == 0


def test_an_unknown_scripted_player_names_the_exploiter_too():
    from agents.common.configuration.hyperparameters import SelfPlay
    from agents.common.errors import UsageError
    from agents.session.opponents import check_players

    valid = (
        r"\(still, random, chaser, pusher, anchor, sprinter, champion, dqn_champion, ppo_champion, planner\), exploiter .*, "
    )
    valid += "a model file or a run folder"
    with pytest.raises(UsageError, match="'nobody' is none of the built-in players of BallSumo-v0 " + valid):
        check_players("BallSumo-v0", "self", SelfPlay.from_config({"scripted": "nobody"}))


def test_a_planner_with_holds_of_its_own_is_a_scripted_player_and_bad_holds_are_refused():
    from agents.common.errors import UsageError
    from agents.session.opponents import check_players
    from agents.twoplayer.selfplay import scripted_player
    from ballenvs.duel.search import Planner
    from ballenvs.reference import reference_for

    settings = SelfPlay.from_config({"scripted": "chaser,planner:2/5/10/20", "evaluated": "planner:2/5"})
    assert check_players("BallSumo-v0", "self", settings) is settings
    player = scripted_player("planner:2/5/10/20", 1, reference_for("BallSumo-v0").arena, "BallSumo-v0", {}, 1, "cpu")
    assert isinstance(player, Planner) and sorted(set(player.holds.tolist())) == [2, 5, 10, 20]
    bad = SelfPlay.from_config({"scripted": "planner:0"})
    with pytest.raises(UsageError, match=re.escape("self_play scripted='planner:0': player 'planner:0': planner:H/H/...")):
        check_players("BallSumo-v0", "self", bad)


def test_an_evaluated_player_must_be_one_that_plays_on_its_own():
    """``evaluated``: built-in players (the planner too) or models; the search exploiter plans
    against the learner while it trains, so it is no evaluation's opponent."""
    from agents.common.configuration.hyperparameters import SelfPlay
    from agents.common.errors import UsageError
    from agents.session.opponents import check_players

    assert check_players("BallSumo-v0", "self", SelfPlay.from_config({"evaluated": "planner, chaser"})) is not None
    valid = (
        r"\(still, random, chaser, pusher, anchor, sprinter, champion, dqn_champion, ppo_champion, planner\), "
        "a model file or a run folder"
    )
    for name in ("nobody", "exploiter"):
        with pytest.raises(UsageError, match=f"self_play evaluated='planner,{name}': '{name}' is none of .*" + valid):
            check_players("BallSumo-v0", "self", SelfPlay.from_config({"evaluated": f"planner,{name}"}))


def test_a_league_of_built_in_players_plots_their_ratings(tmp_path, monkeypatch):
    """With no run among the players there is no training step to plot against: elo.png shows each
    rating with its error (it drew flat lines over an empty "training step" axis)."""
    import matplotlib.pyplot as plt

    from agents import league

    closed = []
    monkeypatch.setattr(plt, "close", closed.append)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        folder = league.main(["random", "chaser", "--games", "2", "--log-dir", str(tmp_path), "--threads", "1"])
    assert (folder / "elo.png").stat().st_size > 0
    (axes,) = closed[-1].axes
    assert axes.get_xlabel().startswith("Elo")
    assert [label.get_text() for label in axes.get_yticklabels()] == ["chaser", "random"]


@pytest.mark.slow  # CNNs on both sides, trained
def test_both_balls_learn_from_pixels_the_opponent_acting_for_every_game_at_once(tmp_path, monkeypatch):
    """Self-play on BallSumo-v0's pixels: CNN Q-networks on both sides (the learner's snapshots
    play the right ball from its own stacked frames), the opponent acting for all games of the
    vector env in one batched call per step."""
    from agents import custom_train
    from agents.artifacts.model_players import QPlayer
    from agents.artifacts.models import read_snapshot

    batches = []
    real_act = QPlayer.act

    def counted(self, seat):
        actions = real_act(self, seat)
        batches.append(np.shape(actions))
        return actions

    monkeypatch.setattr(QPlayer, "act", counted)
    argv = ["--env", "BallSumo-v0", "--opponent", "self", "--timesteps", "400", "--n-envs", "4", "--log-dir", str(tmp_path)]
    argv += ["--env-kwargs", "obs_type=pixels", "--no-progress", "--eval-freq", "0", "--hyperparams", "policy=CnnPolicy"]
    argv += ["frame_stack=4", "policy_kwargs=dict()", "learning_starts=100", "buffer_size=500", "batch_size=8"]
    argv += ["self_play=dict(snapshot_steps=200, swap_steps=100, scripted_share=0.5)"]
    assert run_cli(custom_train.main, argv) == 0
    assert batches and set(batches) == {(4,)}, "one call a step, for the 4 games together"
    run = next(tmp_path.glob("custom/BallSumo-v0_1"))
    snapshot = read_snapshot(run / "snapshots" / "snapshot_400_steps.pt", "cpu")["q"]
    convolutions = [name for name, weight in snapshot.items() if weight.dim() == 4]
    assert convolutions and snapshot[convolutions[0]].shape[1] == 4, "a CNN over 4 stacked frames"


@pytest.mark.slow  # a CNN trained by each trainer
@pytest.mark.parametrize("trainer", ["custom_train", "sb3_train"])
def test_the_shipped_pixel_section_trains_both_balls_from_pixels_in_either_trainer(trainer, tmp_path):
    """zoo_configs/selfplay_pixels.yml: BallSumo-v0 by self-play on 4 stacked frames, read by both trainers."""
    import importlib

    from agents.artifacts.runs import read_config
    from agents.common.configuration.config_files import shipped_config

    argv = ["--env", "BallSumo-v0", "--config", str(shipped_config("selfplay_pixels.yml")), "--timesteps", "400"]
    argv += ["--n-envs", "4", "--eval-freq", "0", "--no-progress", "--log-dir", str(tmp_path)]
    argv += ["--hyperparams", "learning_starts=100", "buffer_size=500", "batch_size=8"]
    argv += ["self_play=dict(snapshot_steps=200, swap_steps=100, scripted_share=0.5)"]
    assert run_cli(importlib.import_module(f"agents.{trainer}").main, argv) == 0
    run = next(tmp_path.glob("*/BallSumo-v0_1"))
    config = read_config(run)
    hyper = config["hyperparams"]
    assert (config["opponent"], hyper["policy"], hyper["frame_stack"]) == ("self", "CnnPolicy", 4)
    assert hyper["env_kwargs"]["obs_type"] == "pixels"
    assert sorted(path.name for path in (run / "snapshots").iterdir()), "snapshots of the CNN learner to play against"


@pytest.mark.slow
def test_a_frozen_model_in_the_scripted_list_plays_its_share_of_the_games(tmp_path, capsys):
    """PSRO's step: a model (here a short run's final model) named in ``scripted`` plays the
    scripted games as that model, greedily, through its own observation settings; a path that
    holds no model, or a model of a game without an opponent, is refused before any run folder."""
    from agents import custom_train
    from agents.twoplayer.selfplay import make_opponent
    from tests.helpers import refused

    base = ["--env", "BallSumo-v0", "--timesteps", "300", "--n-envs", "4", "--no-progress", "--eval-freq", "0"]
    base += ["--hyperparams", "learning_starts=100", "buffer_size=1000", "policy_kwargs=dict(net_arch=[16])"]
    assert run_cli(custom_train.main, [*base, "--log-dir", str(tmp_path / "first")]) == 0
    frozen = next((tmp_path / "first").rglob("final_model.pt"))

    settings = SelfPlay.from_config({"scripted_share": 0.5, "scripted": str(frozen)})
    opponent = make_opponent(settings, "BallSumo-v0", {"obs_type": "state"}, None, "cpu")
    (player,) = opponent.scripted
    from agents.artifacts.models import load_run_model

    policy, _ = load_run_model(frozen, frozen.parent, "cpu")
    for mine, theirs in zip(player.q.state_dict().values(), policy.q_net.state_dict().values(), strict=True):
        assert torch.equal(mine, theirs)

    second = tmp_path / "second"
    pool = f"self_play=dict(snapshot_steps=200, swap_steps=100, scripted_share=0.5, scripted='pusher,{frozen.parent}')"
    assert run_cli(custom_train.main, [*base, pool, "--log-dir", str(second)]) == 0
    assert str(frozen.parent) in read_config(second / "custom" / "BallSumo-v0_1")["hyperparams"]["self_play"]["scripted"]

    # The same model, and the planner, as opponents of every evaluation (the evidence a
    # fine-tuning run's pull listens to), logged beside the built-ins.
    third = tmp_path / "third"
    evaluated = f"self_play=dict(snapshot_steps=200, swap_steps=100, scripted_share=0.5, evaluated='planner,chaser,{frozen}')"
    evaluations = ["--eval-freq", "300", "--eval-episodes", "2"]
    capsys.readouterr()
    assert run_cli(custom_train.main, [*base, evaluated, *evaluations, "--log-dir", str(third)]) == 0
    out = capsys.readouterr().out
    assert "vs champion, " in out and "% vs planner, " in out and f"% vs {frozen} (" in out
    assert out.count("% vs chaser") == 1  # a built-in named again is played once
    logged = (third / "custom" / "BallSumo-v0_1" / "progress.csv").read_text().splitlines()[0]
    assert "eval/win_rate_vs_planner" in logged and f"eval/win_rate_vs_{frozen}" in logged

    empty = tmp_path / "empty"
    empty.mkdir()
    capsys.readouterr()
    for scripted, named in ((str(empty), "no final_model"), (str(tmp_path / "nowhere"), "a model file or a run folder")):
        err = refused(
            capsys, custom_train.main, [*base, f"self_play=dict(scripted='{scripted}')", "--log-dir", str(second)], second
        )
        assert named in err and repr(scripted) in err


@pytest.mark.parametrize(
    "space, frames",
    [(spaces.Box(-1, 1, (11,), np.float32), 2), (spaces.Box(0, 255, (36, 36, 1), np.uint8), 4)],
    ids=["state", "pixels"],
)
def test_a_q_players_saved_frames_must_fit_its_network(space, frames):
    from agents.algorithms.networks import QNetwork, network_spec
    from agents.artifacts.model_players import QPlayer
    from agents.environments.frames import stacked_space

    stacked = stacked_space(space, frames)
    spec = network_spec(stacked, 9, "CnnPolicy" if len(space.shape) == 3 else "MlpPolicy", {})
    player = QPlayer(QNetwork(spec), "cpu", frames)
    fitting = np.zeros((3, *space.shape[:-1], space.shape[-1] * frames), space.dtype)
    player.set_state({"frames": {"stack": fitting}})  # what the player itself saves
    wrong = np.zeros((3, *space.shape[:-1], space.shape[-1] * frames * 2), space.dtype)
    with pytest.raises(ValueError, match="Q player frames: expected stacks of"):
        player.set_state({"frames": {"stack": wrong}})


@pytest.mark.parametrize("log_dir, message", [("a_file", "exists and is not a folder"), ("", "--log-dir '': name a folder")])
def test_a_league_refuses_a_log_dir_it_cannot_write_before_any_game(tmp_path, monkeypatch, capsys, log_dir, message):
    from agents import league
    from tests.helpers import refused

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("x")

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(league, "play_league", no_games)
    argv = ["random", "still", "--games", "2", "--env", "BallSumo-v0", "--log-dir", log_dir]
    assert message in refused(capsys, league.main, argv)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a_file"]
