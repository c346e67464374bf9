"""Players a user takes home, tried as a downstream project would (public names only): a trained
model loaded in a few lines plays as ``gym.make(..., opponent=...)`` on the pixel and state variants
whatever frames the env shows; a bare stable-baselines3 model plays where its observation_space
says what it needs (frames stacked, channels first), or is refused at make in one line."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
import ballenvs  # noqa: F401  (registers the ids)
from agents import train
from agents.session.cli import run_cli

#: The main command's section (SB3's DQN on 4 stacked 36x36 frames against chaser), a few hundred steps.
PIXEL_RUN = ["--algo", "dqn", "--timesteps", "400", "--n-envs", "2", "--eval-freq", "0", "--save-freq", "0"]
PIXEL_RUN += ["--final-games", "0", "--no-progress", "--threads", "1", "--hyperparams", "learning_starts=100"]
#: Our DQN's self-play section on BallSumo-v0's state, a few hundred steps.
STATE_RUN = ["--algo", "custom", "--env", "BallSumo-v0", "--timesteps", "300", "--n-envs", "2", "--eval-freq", "0"]
STATE_RUN += ["--final-games", "0", "--no-progress", "--threads", "1", "--hyperparams", "learning_starts=100"]
STATE_RUN += ["buffer_size=500", "self_play=dict(scripted='chaser', scripted_share=0.5, snapshot_steps=100, swap_steps=50)"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("players")
    assert run_cli(train.main, [*PIXEL_RUN, "--log-dir", str(folder)]) == 0
    assert run_cli(train.main, [*STATE_RUN, "--log-dir", str(folder)]) == 0
    return {"pixels": folder / "dqn" / "BallDuel-v0_1", "state": folder / "custom" / "BallSumo-v0_1"}


def plays(env: gym.Env, steps: int = 30) -> None:
    """``steps`` steps of ``env`` against its opponent, games restarted as they end."""
    env.reset(seed=0)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()


@pytest.mark.parametrize("trained", ["pixels", "state"])
@pytest.mark.parametrize("env_kwargs", [{}, {"obs_type": "state"}, {"obs_size": 48}], ids=["64px", "state", "48px"])
def test_a_loaded_model_is_an_opponent_in_any_variant_of_its_game(runs, trained, env_kwargs):
    player = agents.load_player(runs[trained])
    env_id = "BallDuel-v0" if trained == "pixels" else "BallSumo-v0"
    plays(gym.make(env_id, opponent=player, **env_kwargs))


@pytest.mark.parametrize("trained", ["pixels", "state"])
def test_a_loaded_model_drives_a_seat_of_the_state_face_one_game_or_a_batch(runs, trained):
    from ballenvs.duel import parallel_env, policy

    rules = {} if trained == "pixels" else ballenvs.SUMO_RULES
    game = parallel_env(obs_type="state", **rules)
    mine, champion = policy(agents.load_player(runs[trained]), **rules), policy("champion-v3", **rules)
    observations, _ = game.reset(seed=2)
    for _ in range(5):
        actions = {"left": mine(observations["left"]), "right": champion(observations["right"])}
        assert all(game.action_space(side).contains(action) for side, action in actions.items())
        observations, *_ = game.step(actions)
    both = np.stack([observations["left"], observations["right"]])
    assert mine(both).shape == (2,) and mine(observations["left"]) in range(9)  # a batch of another size starts anew


def test_a_model_file_loads_as_its_run_folder_does(runs):
    player = agents.load_player(runs["pixels"] / "final_model.zip")
    env = gym.make_vec("BallDuel-v0", num_envs=3, vectorization_mode="vector_entry_point", opponent=player)
    env.reset(seed=1)
    for _ in range(10):
        env.step(np.zeros(3, dtype=np.int64))
    env.close()


def test_a_bare_sb3_model_plays_on_the_frames_it_was_trained_on_and_is_refused_at_make_elsewhere(runs):
    from stable_baselines3 import DQN

    model = DQN.load(runs["pixels"] / "final_model.zip", device="cpu")
    assert model.observation_space.shape == (4, 36, 36)  # four frames stacked, channels first
    plays(gym.make("BallDuel-v0", opponent=model, obs_size=36))
    with pytest.raises(ValueError, match=r"observation_space \(4, 36, 36\) does not fit .* make the env with obs_size=36"):
        gym.make("BallDuel-v0", opponent=model)


def test_a_path_that_holds_no_model_is_one_line(tmp_path):
    from agents.common.errors import UsageError

    with pytest.raises(UsageError, match="no final_model, best_model, interrupted_model in"):
        agents.load_player(tmp_path)


def test_a_person_plays_a_trained_model_headless_with_scripted_keys(runs, capsys):
    from ballenvs import play

    opponent = play.opponent_of(str(runs["state"]))  # as --opponent RUN gives it
    env = gym.make("BallSumo-v0", render_mode="human", opponent=opponent)  # drawn by SDL's dummy driver here
    held = [(True, False, False, True, False)] * 220 + [(False, False, False, False, True)]  # up-right, then Esc
    keys = iter(held)
    wins, losses, draws = play.play(env, lambda: next(keys), two_players=True, seed=0)
    env.close()
    assert wins + losses + draws >= 2  # BallSumo's games end within 101 steps
    out = capsys.readouterr().out
    assert out.count("winner: ") == wins + losses + draws and f"you won {wins}, lost {losses}, drew {draws}" in out


def test_an_opponent_that_is_no_player_and_no_path_is_one_line(tmp_path):
    from ballenvs import play
    from ballenvs.cli import CommandError

    assert play.opponent_of("pusher") == "pusher"
    with pytest.raises(CommandError, match="not a built-in player .*, a run folder or a model file"):
        play.opponent_of(str(tmp_path / "nowhere"))


def test_the_new_commands_refuse_what_they_cannot_read_in_one_line(runs, capsys):
    from ballenvs.play import main as play_main
    from benchmarks import state_head
    from tests.helpers import refused

    assert "--opponent '': name a built-in player" in refused(capsys, play_main, ["--opponent", ""])
    assert "a model of --algo dqn; this reads a run of our PPO" in refused(capsys, state_head.main, [str(runs["pixels"])])
