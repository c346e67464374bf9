"""--algo rllib_ppo on a local Ray (2 CPUs, the trainer's process playing): one-player, self-play and
picture runs of a few iterations, their models played by agents.evaluate and the league, the
rebuilt network equal to RLlib's module, the pool's snapshots refreshed, a resume, every refusal.
Runs where the rllib extra is installed (CI's oldest-gymnasium stage)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

ray = pytest.importorskip("ray")

from agents import evaluate, exploit, league, train  # noqa: E402  (after the skip: these tests need Ray)
from agents.artifacts.runs import read_config  # noqa: E402
from agents.rllib.network import load_policy  # noqa: E402
from agents.session.cli import run_cli  # noqa: E402
from tests.helpers import refused  # noqa: E402

#: Two iterations of 2 x 64 steps, minibatches of 64, one epoch: seconds, not minutes.
QUICK = ["--n-envs", "2", "--timesteps", "256", "--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]
SMALL = ["n_steps=64", "batch_size=64", "n_epochs=1"]
POOL_SETTINGS = {"snapshot_steps": 128, "window": 2, "scripted_share": 0.5, "scripted": "chaser,pusher"}
POOL = "self_play=dict(snapshot_steps=128, window=2, scripted_share=0.5, scripted='chaser,pusher')"  # the same, as written


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def module_state(folder) -> dict[str, np.ndarray]:
    """A module's weights as its checkpoint holds them (msgpack, the run saves no pickle of them)."""
    import msgpack
    import msgpack_numpy

    with open(folder / "module_state.msgpack", "rb") as file:
        return msgpack.load(file, object_hook=msgpack_numpy.decode, strict_map_key=False)


def trained(tmp_path, *argv: str, hyperparams: tuple[str, ...] = ()):
    assert run_cli(train.main, [*QUICK, *argv, "--log-dir", str(tmp_path), "--hyperparams", *SMALL, *hyperparams]) == 0
    return next((tmp_path / "rllib_ppo").iterdir())


def test_a_one_player_run_is_saved_as_weights_and_a_checkpoint_and_played_by_agents_evaluate(tmp_path, capsys):
    run = trained(tmp_path, "--algo", "rllib_ppo", "--env", "BallDuel-v0")
    assert (run / "final_model.npz").is_file() and (run / "final_model.rllib" / "rllib_checkpoint.json").is_file()
    assert read_config(run)["hyperparams"]["env_kwargs"] == {"obs_type": "state", "opponent": "chaser"}
    capsys.readouterr()
    assert run_cli(evaluate.main, [str(run), "--episodes", "4", "--no-progress"]) == 0
    assert "BallDuel-v0: 4 episodes" in capsys.readouterr().out


def test_the_rebuilt_policy_gives_rllibs_own_logits(tmp_path):
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    run = trained(tmp_path, "--algo", "rllib_ppo", "--env", "UAVGridImage-v0", "--env-kwargs", "max_episode_steps=40")
    module_dir = run / "final_model.rllib" / "learner_group" / "learner" / "rl_module" / "default_policy"
    module = RLModule.from_checkpoint(module_dir)
    policy = load_policy(run / "final_model.npz", read_config(run), "cpu")
    frames = torch.rand(3, 64, 64, 4)
    with torch.no_grad():
        theirs = module.forward_inference({Columns.OBS: frames})[Columns.ACTION_DIST_INPUTS]
    torch.testing.assert_close(policy.q_net(frames), theirs, rtol=0, atol=0)


def test_self_play_logs_win_rates_refreshes_its_snapshots_and_plays_in_the_league_and_exploit(tmp_path, capsys):
    run = trained(tmp_path, "--algo", "rllib_ppo", "--env", "BallSumo-v0", hyperparams=(POOL,))
    header = (run / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"win_rate/chaser", "win_rate/pusher"} & set(header), header
    assert any(
        name.startswith("win_rate/") and name.split("/")[1] in ("learner", "snapshot_0", "snapshot_1") for name in header
    )
    modules = run / "final_model.rllib" / "learner_group" / "learner" / "rl_module"
    # Snapshots at steps 0 (both slots), 128 (slot 0) and 256 (slot 1, the run's last step).
    learner, latest = (module_state(modules / name) for name in ("learner", "snapshot_1"))
    assert learner.keys() == latest.keys() and all(np.array_equal(learner[k], latest[k]) for k in learner)
    capsys.readouterr()
    argv = [str(run / "final_model.npz"), "chaser", "--env", "BallSumo-v0", "--games", "4"]
    assert run_cli(league.main, [*argv, "--log-dir", str(tmp_path / "league"), "--no-progress"]) == 0
    assert "chaser" in capsys.readouterr().out
    argv = [str(run), "--search-only", "--games", "2", "--no-progress", "--threads", "1"]
    assert run_cli(exploit.main, argv) == 0  # the search exploiter plans against the rebuilt policy
    assert "search" in capsys.readouterr().out


def test_the_pools_snapshot_slots_take_the_learners_weights():
    from agents.rllib.duel_pool import LEARNER, DuelPool, module_of

    pool = DuelPool({"env_id": "BallSumo-v0", "env_kwargs": {"obs_type": "state"}, "self_play": POOL_SETTINGS})
    drawn = set()
    for seed in range(40):
        observations, _ = pool.reset(seed=seed)
        drawn.add(pool.opponent)
        assert set(observations) == set(pool.agents) and pool.agents[0] == "left"
        assert [module_of(agent) for agent in pool.agents][0] == LEARNER
    assert drawn == {"chaser", "pusher", LEARNER, "snapshot_0", "snapshot_1"}
    pool.reset(seed=0)
    while pool.agents:
        actions = {agent: 3 for agent in pool.agents}
        _, rewards, terminated, truncated, infos = pool.step(actions)
    assert infos["left"]["opponent"] == pool.opponent and infos["left"]["winner"] in ("left", "right", "draw", None)
    assert terminated["__all__"] or truncated["__all__"]


def test_a_picture_run_takes_float_channels_last_frames_and_refuses_others(tmp_path, capsys):
    run = trained(tmp_path, "--algo", "rllib_ppo", "--env", "UAVGridImage-v0", "--env-kwargs", "max_episode_steps=40")
    assert run_cli(evaluate.main, [str(run), "--episodes", "2", "--no-progress"]) == 0
    capsys.readouterr()  # the run's notes
    for kwargs, message in [
        (["pixel_dtype=uint8"], "RLlib's CNN takes float frames: add --env-kwargs pixel_dtype=float32"),
        (["channels_last=false"], "RLlib's CNN reads frames channels-last, not (4, 64, 64): add channels_last=true"),
    ]:
        argv = ["--algo", "rllib_ppo", "--env", "UAVGridImage-v0", "--env-kwargs", *kwargs, "--log-dir", str(tmp_path / "x")]
        assert message in refused(capsys, train.main, argv, tmp_path)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env", "BallSumo-v0", "--hyperparams", "frame_stack=4"], "frame_stack=4: rllib_ppo plays single frames"),
        (["--env", "BallSumo-v0", "--hyperparams", "self_play=dict(sampling='pfsp')"], "draws its snapshots uniformly"),
        (["--env", "BallSumo-v0", "--hyperparams", "self_play=dict(scripted_sampling='pfsp')"], "built-in players uniformly"),
        (["--env", "BallSumo-v0", "--hyperparams", "self_play=dict(scripted='exploiter')"], "takes built-in players"),
        (["--env", "BallDuel-v0", "--hyperparams", "policy_kwargs=dict(net_arch=[0])"], "net_arch must be a list"),
    ],
)
def test_what_rllib_cannot_run_is_refused_leaving_no_folder(argv, message, tmp_path, capsys):
    assert message in refused(capsys, train.main, ["--algo", "rllib_ppo", *argv, "--log-dir", str(tmp_path)], tmp_path)


def test_a_resumed_run_continues_from_its_checkpoint_and_step_count(tmp_path, capsys):
    run = trained(tmp_path, "--algo", "rllib_ppo", "--env", "BallDuel-v0")
    with np.load(run / "final_model.npz") as saved:
        steps = int(saved["num_env_steps_trained"])
    capsys.readouterr()
    argv = [
        "--resume",
        str(run),
        "--timesteps",
        "128",
        "--log-dir",
        str(tmp_path / "more"),
        "--no-progress",
        "--eval-freq",
        "0",
    ]
    assert run_cli(train.main, argv) == 0
    assert f"resumed from {run / 'final_model.npz'} at step {steps}" in capsys.readouterr().err
    resumed = next((tmp_path / "more" / "rllib_ppo").iterdir())
    with np.load(resumed / "final_model.npz") as saved:
        assert int(saved["num_env_steps_trained"]) >= steps + 128


def test_the_sampling_benchmark_times_both_vectorisations(tmp_path, monkeypatch, capsys):
    from benchmarks import rllib_sampling

    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    results = rllib_sampling.main(["--runners", "1", "--envs", "4", "--steps", "400", "--repeats", "1"])
    assert {r["mode"] for r in results} == set(rllib_sampling.MODES) and all(r["steps_per_s"] > 0 for r in results)
    assert "| 1 | our vector env |" in capsys.readouterr().out and (tmp_path / "rllib_sampling.json").is_file()
