"""Our runs and envs with the tools people already use, each tool run for real: the RL Zoo's
enjoy, record_video, plots and push_to_hub (up to the upload), a plain ``DQN.load`` where
``agents`` cannot be imported, Gymnasium's vector wrappers and ``utils.play``, PettingZoo's
``max_cycles_test``, Weights & Biases offline, and videos."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import ballenvs
from agents import custom_train, sb3_train
from agents.evaluate import main as evaluate_main
from agents.session.cli import run_cli
from tests.helpers import REPO, SHORT, keep_gymnasium_time_limit

#: Real processes, trainer runs and studies: the unit tier (-m "not slow") leaves them out.
pytestmark = pytest.mark.slow


def zoo_location(runs: dict[str, Path], trainer: str) -> tuple[str, str]:
    """The zoo's -f folder and env id of a run: SB3's run folder is a zoo run; ours holds one in zoo/."""
    if trainer == "dqn":
        return str(runs["dqn"].parent.parent), "UAVGrid-v0"
    return str(runs["custom"] / "zoo"), "BallDuel-v0"


def zoo(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """A zoo command through agents.rlzoo, which registers our ids first (python -m rl_zoo3.enjoy
    --gym-packages ballenvs does it too; record_video and push_to_hub take no such flag)."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "agents.rlzoo", module, *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("trainer", ["dqn", "custom"])
def test_the_zoo_enjoys_and_records_our_runs(runs, trainer, tmp_path):
    folder, env_id = zoo_location(runs, trainer)
    common = ["--algo", "dqn", "--env", env_id, "-f", folder, "--exp-id", "1"]
    enjoyed = zoo("enjoy", *common, "-n", "120", "--no-render", "--deterministic", cwd=tmp_path)
    assert enjoyed.returncode == 0, enjoyed.stderr[-2000:]
    assert f"{env_id}.zip" in enjoyed.stdout
    recorded = zoo("record_video", *common, "-n", "40", "-o", str(tmp_path / "videos"), cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    assert list((tmp_path / "videos").glob("*.mp4"))


@pytest.mark.parametrize("trainer", ["dqn", "custom"])
def test_the_zoo_plots_our_runs(runs, trainer, tmp_path):
    folder, env_id = zoo_location(runs, trainer)
    plotted = zoo(
        "plots.all_plots", "-a", "dqn", "-e", env_id, "-f", folder, "-o", str(tmp_path / "out"), "--no-display", cwd=tmp_path
    )
    assert plotted.returncode == 0, plotted.stderr[-2000:]
    assert (tmp_path / "out.pkl").is_file()
    trained = zoo("plots.plot_train", "-a", "dqn", "-e", env_id, "-f", folder, cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr[-2000:]


def test_push_to_hub_builds_the_repo_folder_and_model_card_up_to_the_upload(runs, tmp_path, monkeypatch):
    """No network here: the Hub's client is replaced by one that records what would be uploaded."""
    import huggingface_hub

    from agents import rlzoo

    uploaded = {}

    class OfflineHub:
        def create_repo(self, **kwargs):
            return f"https://huggingface.co/{kwargs['repo_id']}"

        def snapshot_download(self, repo_id, local_dir):
            Path(local_dir).mkdir(parents=True, exist_ok=True)

        def upload_folder(self, repo_id, folder_path, commit_message):
            uploaded.update(repo_id=repo_id, files=sorted(p.name for p in Path(folder_path).iterdir()))

    monkeypatch.setattr(huggingface_hub, "HfApi", OfflineHub)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    folder, env_id = zoo_location(runs, "dqn")
    argv = ["push_to_hub", "--algo", "dqn", "--env", env_id, "-f", folder, "--exp-id", "1"]
    argv += ["--repo-name", "dqn-UAVGrid-v0", "-orga", "someone", "-m", "first upload", "--n-timesteps", "300"]
    monkeypatch.setattr(sys, "argv", list(sys.argv))  # rlzoo sets the zoo's command line
    keep_gymnasium_time_limit(monkeypatch)
    rlzoo.main(argv)
    assert uploaded["repo_id"] == "someone/dqn-UAVGrid-v0"
    assert {"README.md", "config.yml", "dqn-UAVGrid-v0.zip", "results.json"} <= set(uploaded["files"])
    card = (tmp_path / "hub" / "dqn-UAVGrid-v0" / "README.md").read_text()
    assert "UAVGrid-v0" in card and "DQN" in card


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_a_saved_sb3_model_loads_with_plain_dqn_load_where_agents_cannot_be_imported(env_id, tmp_path):
    argv = ["--env", env_id, "--timesteps", "300", "--eval-freq", "0", "--no-progress", "--save-freq", "0", "--n-envs", "2"]
    argv += ["--hyperparams", "learning_starts=100", "buffer_size=500", "--log-dir", str(tmp_path)]
    if env_id == "BallSumo-v0":
        argv += ["--opponent", "chaser"]
    assert run_cli(sb3_train.main, argv) == 0
    model = next(tmp_path.glob(f"dqn/{env_id}_1/final_model.zip"))
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(model, alone / "model.zip")
    script = (
        "import sys\n"
        "sys.modules['agents'] = None  # importing agents fails, as in a project without ours\n"
        "from stable_baselines3 import DQN\n"
        "model = DQN.load('model.zip', device='cpu')\n"
        "print(type(model).__name__, model.observation_space.shape)\n"
    )
    loaded = subprocess.run([sys.executable, "-c", script], cwd=alone, capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert "Could not deserialize" not in loaded.stderr and loaded.stdout.startswith("DQN")


def test_evaluate_plays_a_zoo_run_folder_and_a_bare_zip(runs, tmp_path, capsys):
    zoo_run = runs["custom"] / "zoo" / "dqn" / "BallDuel-v0_1"
    assert run_cli(evaluate_main, [str(zoo_run), "--episodes", "2"]) == 0
    bare = tmp_path / "model.zip"
    shutil.copy(runs["dqn"] / "final_model.zip", bare)
    assert run_cli(evaluate_main, [str(bare), "--env", "UAVGrid-v0", "--episodes", "1"]) == 0
    assert run_cli(evaluate_main, [str(bare), "--episodes", "1"]) == 2
    assert "say which env it plays with --env" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_evaluate_records_a_video_headless(runs, tmp_path, suffix, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    video = tmp_path / f"played{suffix}"
    assert run_cli(evaluate_main, [str(runs["custom"]), "--episodes", "1", "--video", str(video)]) == 0
    assert video.stat().st_size > 1000
    if suffix == ".gif":
        import imageio.v2 as imageio

        frames = imageio.mimread(video)
        assert len(frames) > 5 and frames[0].shape[-1] in (3, 4)
    else:
        assert video.read_bytes()[4:8] == b"ftyp", "an MP4 container"


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_gymnasium_vector_wrappers_work_on_the_default_vector_env(env_id, tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    from gymnasium.wrappers.vector import HumanRendering, RecordVideo

    envs = gym.make_vec(env_id, num_envs=3, render_mode="rgb_array")
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 3 and not np.array_equal(frames[0], frames[1]), "one picture per env"
    human = HumanRendering(gym.make_vec(env_id, num_envs=3, render_mode="rgb_array"))
    human.reset(seed=0)
    human.step(np.zeros(3, dtype=np.int64))
    human.close()
    recorder = RecordVideo(gym.make_vec(env_id, num_envs=4, render_mode="rgb_array"), str(tmp_path / "v"))
    recorder.reset(seed=0)
    for _ in range(5):
        recorder.step(np.zeros(4, dtype=np.int64))
    recorder.close()
    assert list((tmp_path / "v").glob("*.mp4"))


@pytest.mark.parametrize("env_id", ballenvs.ENV_IDS)
def test_gymnasium_play_drives_every_env(env_id, monkeypatch):
    """gymnasium.utils.play.play, headless, with its keys pressed by posting pygame events."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    from gymnasium.utils.play import play

    from ballenvs.render import import_pygame

    pygame = import_pygame()
    env = gym.make(env_id, render_mode="rgb_array")
    keys = env.unwrapped.get_keys_to_action()
    assert sorted(keys.values()) == list(range(1, 9))
    steps = []

    def callback(obs, next_obs, action, reward, terminated, truncated, info):
        steps.append(action)
        if len(steps) == 3:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_RIGHT))
        if len(steps) == 20:
            pygame.event.post(pygame.event.Event(pygame.QUIT))

    play(env, fps=1000, callback=callback, keys_to_action=keys, noop=0)
    assert 0 in steps and 3 in steps, "no key: action 0; the right arrow: east"


def test_the_two_player_faces_pass_pettingzoo_max_cycles_test():
    from pettingzoo.test import max_cycles_test

    import ballenvs.duel

    max_cycles_test(ballenvs.duel)


def test_track_logs_to_weights_and_biases_offline(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    argv = ["--env", "BallDuel-v0", "--env-kwargs", "max_episode_steps=60", "--n-envs", "2", *SHORT, "--track"]
    assert run_cli(custom_train.main, [*argv, "--wandb-project", "ballenvs-test", "--log-dir", str(tmp_path)]) == 0
    run = tmp_path / "custom" / "BallDuel-v0_1"
    offline = next((run / "wandb").glob("offline-run-*"))
    assert list(offline.glob("*.wandb")), "the run's record, to `wandb sync` later"
    assert (run / "final_model.mp4").is_file()
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    events = [event for path in run.glob("events.out.tfevents.*") for event in EventFileLoader(str(path)).Load()]
    tags = {value.tag for event in events if event.HasField("summary") for value in event.summary.value}
    assert "_hparams_/experiment" in tags, "TensorBoard has the hyperparameters"


def test_track_without_wandb_installed_is_refused_before_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wandb", None)
    assert run_cli(custom_train.main, ["--track", "--log-dir", str(tmp_path)]) == 2
    assert "pip install 'ballenvs[wandb]'" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_reward_thresholds_are_set_where_a_level_means_something():
    thresholds = {env_id: gym.spec(env_id).reward_threshold for env_id in ballenvs.ENV_IDS}
    assert thresholds == {"BallDuel-v0": 0.8, "BallSumo-v0": 0.8, "UAVGrid-v0": 21.0, "UAVGridImage-v0": 21.0}


def test_the_package_ships_its_license_and_type_marker():
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert (REPO / "ballenvs" / "py.typed").is_file() and (REPO / "agents" / "py.typed").is_file()
    assert "## " in (REPO / "CHANGELOG.md").read_text()


def test_league_and_compare_film_their_best_player(runs, tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    from agents import compare, league

    clip = tmp_path / "league.gif"
    argv = ["chaser", "pusher", "anchor", "--env", "BallSumo-v0", "--games", "4", "--log-dir", str(tmp_path)]
    assert run_cli(league.main, [*argv, "--video", str(clip)]) == 0
    assert clip.stat().st_size > 1000
    folder = tmp_path / "compare"
    folder.mkdir()
    manifest = {"env_id": "BallDuel-v0", "env_kwargs": {"max_episode_steps": 60}, "timesteps": 600, "seeds": 1}
    manifest |= {"eval_freq": 300, "eval_episodes": 2, "score_episodes": 1, "hardware": "x", "command": "x"}
    manifest |= {"baselines": {"pusher": 0.0}, "heuristic": "pusher", "runs": {"custom DQN": [str(runs["custom"])]}}
    (folder / "manifest.json").write_text(__import__("json").dumps(manifest))
    assert run_cli(compare.main, ["--from-runs", str(folder), "--video", str(tmp_path / "best.mp4")]) == 0
    assert (tmp_path / "best.mp4").stat().st_size > 1000
