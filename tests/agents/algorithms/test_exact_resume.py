"""Resume is exact: a run of our algorithms stopped after any step and resumed for the steps it has
left ends bit for bit where the unbroken run ends (every tensor of the final model: weights,
target network, optimiser state), single-player and self-play; and where it cannot be, the
resume says why in one line."""

from __future__ import annotations

import contextlib
import signal
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import train
from agents.common.stops import Stopped, stopping_between_steps
from agents.session.cli import run_cli
from agents.session.milestones import Milestones
from tests.helpers import UAV

SELF_PLAY = "self_play=dict(snapshot_steps=96, swap_steps=48, p_latest=0.3, window=2, scripted_share=0.5, "
SELF_PLAY += "scripted='chaser,sprinter,planner', sampling='pfsp', scripted_sampling='pfsp')"
#: Each run's flags and length: our DQN and PQN on UAVGrid, our DQN by self-play (with the scripted
#: players that remember: sprinter's plans, the planner's generator; their games moving by PFSP) on the duel.
RUNS = {
    # Our DQN and PQN evaluate and save the mean of the second half's weights (tail_averaging): a stop may fall
    # before the tail or in it.
    "dqn": ([*UAV, "--algo", "custom", "--hyperparams", "buffer_size=400", "learning_starts=60", "tail_averaging=0.5"], 600),
    "pqn": ([*UAV, "--algo", "pqn", "--n-envs", "4", "--hyperparams", "rollout_steps=16", "tail_averaging=0.5"], 640),
    "self-play": (
        ["--env", "BallDuel-v0", "--algo", "custom", "--n-envs", "4", "--opponent", "self"]
        + ["--hyperparams", "buffer_size=400", "learning_starts=60", "n_steps=3", SELF_PLAY],
        480,
    ),
    # Our PPO by self-play: its sampling's generator, the critic and a rollout cut short; its copies
    # in the pool sampling their moves too, as its shipped section's do (by the games' generators);
    # the mean of its actor's weights over the second half evaluated and saved (tail_averaging).
    "ppo": (
        ["--env", "BallSumo-v0", "--algo", "ppo", "--n-envs", "4", "--hyperparams", "rollout_steps=16", "tail_averaging=0.5"]
        + [SELF_PLAY[:-1] + ", opponent_acts='sample')"],
        480,
    ),
    # The played network an average of the online one's (policy_averaging), snapshots taken of it.
    "self-play, averaged": (
        ["--env", "BallSumo-v0", "--algo", "custom", "--n-envs", "4", "--env-kwargs", "obs_type=state", "opponent=self"]
        + ["--hyperparams", "buffer_size=400", "learning_starts=60", "policy_averaging=0.05", "tail_averaging=0"]
        + [SELF_PLAY],
        480,
    ),
    # The mean of the last half's weights evaluated and saved (tail_averaging), the online network snapshotted.
    "self-play, tail-averaged": (
        ["--env", "BallSumo-v0", "--algo", "custom", "--n-envs", "4", "--env-kwargs", "obs_type=state", "opponent=self"]
        + ["--hyperparams", "buffer_size=400", "learning_starts=60", "tail_averaging=0.5", SELF_PLAY],
        480,
    ),
}
#: One torch thread in every run: how a sum splits over threads changes its last bits (--threads
#: auto picks by the machine's load, which the suite's other workers change).
QUIET = ["--seed", "3", "--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]


def run_folder(log_dir: Path) -> Path:
    return max(log_dir.glob("*/*/config.yml"), key=lambda path: int(path.parent.name.rsplit("_", 1)[1])).parent


def train_run(argv: list[str], log_dir: Path, stop_after: int | None = None) -> Path:
    """A run in ``log_dir`` (stopped as SIGTERM would stop it after step ``stop_after``); its folder."""
    with stopping_after(stop_after):
        assert run_cli(train.main, [*argv, "--log-dir", str(log_dir)]) in (0, 128 + signal.SIGTERM)
    return run_folder(log_dir)


@contextlib.contextmanager
def stopping_after(step: int | None):
    """SIGTERM during step ``step`` (sent to this process: its trainer's handler takes it)."""
    original = Milestones.on_step

    def on_step(self: Milestones, steps: int) -> bool:
        if steps == step:
            signal.raise_signal(signal.SIGTERM)
        return original(self, steps)

    Milestones.on_step = on_step  # type: ignore[method-assign]
    try:
        yield
    finally:
        Milestones.on_step = original  # type: ignore[method-assign]


def tensors(model: Path) -> dict[str, torch.Tensor]:
    """Every tensor and number of a checkpoint's agent (its optimiser's settings left out: they are
    the config's), by its path in the state dicts, and its counters."""
    flat: dict[str, torch.Tensor] = {}

    def walk(value, path: str) -> None:
        if isinstance(value, torch.Tensor):
            flat[path] = value
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}/{key}")
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}/{i}")
        elif isinstance(value, (int, float)):  # step counts, learning rates; bools too
            flat[path] = torch.tensor(float(value))

    state = torch.load(model, weights_only=True)
    walk(state["agent"], "agent")
    walk(state["progress"], "progress")
    return flat


def max_difference(a: Path, b: Path) -> float:
    first, second = tensors(a), tensors(b)
    assert first.keys() == second.keys()
    return max((first[k].double() - second[k].double()).abs().max().item() for k in first if first[k].numel())


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory):
    """Each run's final model, trained without a stop, once."""
    made: dict[str, Path] = {}

    def final_model(name: str) -> Path:
        if name not in made:
            argv, steps = RUNS[name]
            folder = train_run([*argv, *QUIET, "--timesteps", str(steps)], tmp_path_factory.mktemp(name))
            made[name] = folder / "final_model.pt"
        return made[name]

    return final_model


def stopped_and_resumed(name: str, stop_step: int, log_dir: Path, capsys) -> tuple[Path, str]:
    argv, steps = RUNS[name]
    buffer = [] if name in ("pqn", "ppo") else ["--save-replay-buffer"]
    cut = train_run([*argv, *QUIET, *buffer, "--timesteps", str(steps)], log_dir, stop_after=stop_step)
    assert (cut / "interrupted_model.pt").is_file()
    capsys.readouterr()
    resumed = train_run(["--resume", str(cut), "--timesteps", str(steps - stop_step), *QUIET], log_dir)
    return resumed / "final_model.pt", capsys.readouterr().out


@pytest.mark.parametrize("name", list(RUNS))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(vector_steps=st.integers(1, 10**6))
def test_a_run_stopped_after_any_step_and_resumed_ends_bit_for_bit_as_the_unbroken_run(name, vector_steps, unbroken, capsys):
    argv, steps = RUNS[name]
    n_envs = int([argv[i + 1] for i, flag in enumerate(argv) if flag == "--n-envs"][-1])  # the last one given counts
    stop_step = n_envs * (1 + vector_steps % (steps // n_envs - 1))  # mid-episode, mid-rollout, before learning starts
    with tempfile.TemporaryDirectory() as folder:
        resumed, out = stopped_and_resumed(name, stop_step, Path(folder), capsys)
        assert "not exact" not in out, out
        assert max_difference(unbroken(name), resumed) == 0.0, f"stopped after step {stop_step}"


def test_a_resume_without_the_replay_buffer_says_it_is_not_exact_and_why(tmp_path, capsys):
    argv, steps = RUNS["dqn"]
    cut = train_run([*argv, *QUIET, "--timesteps", str(steps)], tmp_path, stop_after=200)
    capsys.readouterr()
    train_run(["--resume", str(cut), "--timesteps", "100", *QUIET], tmp_path)
    lines = [line for line in capsys.readouterr().err.splitlines() if "not exact" in line]
    assert lines == ["resume is not exact: no replay buffer was saved, it starts empty (--save-replay-buffer keeps it)"]


def test_a_run_state_that_does_not_fit_is_refused_in_one_line(tmp_path, capsys):
    argv, steps = RUNS["dqn"]
    cut = train_run([*argv, *QUIET, "--save-replay-buffer", "--timesteps", str(steps)], tmp_path, stop_after=200)
    model = cut / "interrupted_model.pt"
    state = torch.load(model, weights_only=True)
    state["run_state"]["envs"]["lengths"] = {"numpy array": torch.zeros(5, dtype=torch.int64)}  # 5 envs, not 2
    torch.save(state, model)
    capsys.readouterr()
    code = run_cli(train.main, ["--resume", str(cut), "--timesteps", "100", *QUIET, "--log-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "run state does not fit" in err and "lengths" in err, err


def test_the_first_stop_waits_for_the_steps_end_and_a_second_stops_at_once():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped), stopping_between_steps() as stop:
        signal.raise_signal(signal.SIGTERM)
        assert stop.signum == signal.SIGTERM  # noted: the loop ends the step, then stops
        signal.raise_signal(signal.SIGUSR1)  # a step that never ends: the second stops it here
        pytest.fail("the second stop did not raise")
    assert stop.signum == signal.SIGUSR1 and signal.getsignal(signal.SIGTERM) == before  # handlers put back


def test_a_resumed_run_shorter_than_its_eval_freq_is_evaluated_at_its_end(tmp_path, capsys):
    argv, steps = RUNS["dqn"]
    cut = train_run([*argv, *QUIET, "--timesteps", str(steps)], tmp_path, stop_after=200)
    capsys.readouterr()
    resume = ["--resume", str(cut), "--timesteps", "100", "--eval-freq", "25000", "--eval-episodes", "1", "--no-progress"]
    train_run(resume, tmp_path)
    evaluations = [line.split(":")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("eval at")]
    assert evaluations == ["eval at 300 steps"]  # its end: 200 trained before, 100 now


def test_a_resume_of_games_in_other_vector_envs_says_it_is_not_exact(tmp_path, capsys):
    argv, steps = RUNS["dqn"]
    cut = train_run([*argv, *QUIET, "--vec-env", "dummy", "--save-replay-buffer", "--timesteps", str(steps)], tmp_path, 200)
    capsys.readouterr()
    train_run(["--resume", str(cut), "--timesteps", "100", *QUIET], tmp_path)
    lines = [line for line in capsys.readouterr().err.splitlines() if "not exact" in line]
    assert len(lines) == 1 and lines[0].startswith("resume is not exact: its games ran in stable-baselines3's vector envs")
    assert "(--vec-env dummy;" in lines[0]


def test_a_self_play_run_stopped_inside_its_averaged_tail_resumes_bit_for_bit(unbroken, capsys):
    # Stopped after the tail began (step 240) and before its next snapshot (288): the resumed run's pool
    # must go on snapshotting the online network, as the unbroken run's did.
    name = "self-play, tail-averaged"
    with tempfile.TemporaryDirectory() as folder:
        resumed, _ = stopped_and_resumed(name, 260, Path(folder), capsys)
        assert max_difference(unbroken(name), resumed) == 0.0


def test_tail_averaging_leaves_the_training_as_it_is_without(unbroken):
    """The mean is only evaluated and saved: the online network ends bit for bit as without it."""
    argv, steps = RUNS["self-play, tail-averaged"]
    plain = [arg for arg in argv if arg != "tail_averaging=0.5"]
    with tempfile.TemporaryDirectory() as folder:
        without = train_run([*plain, *QUIET, "--timesteps", str(steps)], Path(folder)) / "final_model.pt"
        online = torch.load(without, weights_only=True)["agent"]["q"]
    averaged_run = torch.load(unbroken("self-play, tail-averaged"), weights_only=True)["agent"]
    assert all(torch.equal(averaged_run["q"][name], online[name]) for name in online)
    assert not all(torch.equal(averaged_run["averaged"][name], online[name]) for name in online)
