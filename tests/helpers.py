"""Command-line pieces the tests share: tiny but real runs of the trainers and the tools on them."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


@functools.cache
def code_digest() -> str:
    """A digest of the code that trains the fixtures' runs and of its shipped configs."""
    digest = hashlib.sha256()
    for path in sorted([*REPO.glob("agents/**/*.py"), *REPO.glob("agents/**/*.yml"), *REPO.glob("ballenvs/**/*.py")]):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def shared_run(tmp_path_factory, name: str, key: list[str], make: Callable[[Path], Path]) -> Path:
    """The run ``make(folder)`` trains (with the flags ``key``), trained once a test session and
    shared by its xdist workers: kept in the session's shared temporary folder under ``name`` and a
    digest of ``key`` and of the code (:func:`code_digest`); the first worker to ask trains it while
    the others wait on its lock. A test that changes a shared run copies it first (:func:`copy_run`)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker has its own basetemp; their parent is the session's.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    digest = hashlib.sha256("\0".join([name, *key, code_digest()]).encode()).hexdigest()[:16]
    folder = shared / "shared-runs" / f"{name}-{digest}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock"):
        made = folder.with_suffix(".made")
        if made.is_file():
            return Path(made.read_text())
        shutil.rmtree(folder, ignore_errors=True)  # a worker that failed half way
        folder.mkdir()
        run = make(folder)
        made.write_text(str(run))
    return run


def shared_training(tmp_path_factory, name: str, main, argv: list[str], run: str) -> Path:
    """:func:`shared_run` of one command line: ``main(ARGV --log-dir FOLDER)``, its run ``FOLDER/run``."""
    from agents.session.cli import run_cli

    def make(folder: Path) -> Path:
        assert run_cli(main, [*argv, "--log-dir", str(folder)]) == 0
        return folder / run

    return shared_run(tmp_path_factory, name, argv, make)


def tiny_run(timesteps: int = 400, eval_freq: int = 200, eval_episodes: int = 2, n_envs: int = 2) -> list[str]:
    """A few hundred steps on two envs, evaluated: the flags agents.compare and agents.tune pass on."""
    return ["--timesteps", str(timesteps), "--eval-freq", str(eval_freq), "--eval-episodes", str(eval_episodes)] + [
        "--n-envs",
        str(n_envs),
    ]


#: Training starts, checkpoints and evaluations happen, in seconds.
FAST = ["--hyperparams", "buffer_size=1000", "learning_starts=200", "--save-freq", "200", "--eval-freq", "400"]
FAST += ["--eval-episodes", "1", "--no-progress"]
#: A small replay buffer that fills quickly, no evaluations.
TINY = ["--hyperparams", "buffer_size=500", "learning_starts=100", "--eval-freq", "0", "--no-progress"]
#: A short evaluated run: 600 steps, two evaluations of two episodes.
SHORT = ["--timesteps", "600", "--eval-freq", "300", "--eval-episodes", "2", "--no-progress", "--save-freq", "0"]
SHORT += ["--hyperparams", "learning_starts=200", "buffer_size=2000"]
#: Short UAVGrid episodes on two envs.
UAV = ["--env", "UAVGrid-v0", "--n-envs", "2", "--env-kwargs", "max_episode_steps=50"]


def refused(capsys, main, argv: list[str], folder: Path | str | None = None) -> str:
    """Exit status 2, one line on stderr (returned), and (given ``folder``) no run folder made in it."""
    from agents.session.cli import run_cli

    folder = Path(folder) if folder is not None else None
    before = set(folder.rglob("config.yml")) if folder is not None else set()
    assert run_cli(main, argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    if folder is not None:
        assert set(folder.rglob("config.yml")) == before, "no run folder for a refused input"
    return err


def copy_run(run: Path, tmp_path: Path) -> Path:
    """A copy of a finished run folder (``<algo>/<env>_<n>``) under ``tmp_path``, to tamper with."""
    target = tmp_path / run.parent.name / run.name
    shutil.copytree(run, target)
    return target


def train(trainer, log_dir, *extra, timesteps=300):
    """A tiny UAVGrid run of ``trainer`` (checkpoints every 100 steps) in ``log_dir``; its run folder."""
    from agents.common.configuration.registry import trained_by
    from agents.session.cli import run_cli

    argv = [*UAV, "--timesteps", str(timesteps), "--save-freq", "100", "--log-dir", str(log_dir), *TINY, *extra]
    assert run_cli(trainer.main, argv) == 0
    algo = trained_by(trainer.__name__)[0]  # the trainer's default algorithm names its run folders
    return max((Path(log_dir) / algo).iterdir(), key=lambda p: int(p.name.rsplit("_", 1)[1]))


def keep_gymnasium_time_limit(monkeypatch) -> None:
    """Importing rl_zoo3 replaces gymnasium's TimeLimit for the whole process (its gym_patches adds
    ``TimeLimit.truncated`` to infos): a test that imports it in process gives the later tests the
    original back."""
    import gymnasium.envs.registration
    import gymnasium.wrappers
    import gymnasium.wrappers.common

    for module in (gymnasium.wrappers, gymnasium.wrappers.common, gymnasium.envs.registration):
        monkeypatch.setattr(module, "TimeLimit", getattr(module, "TimeLimit", None), raising=False)


def assert_run_layout(run_dir: Path, suffix: str, checkpoint_steps: tuple[int, ...]) -> None:
    """A run folder as the RL Zoo lays one out: its checkpoints, models (``suffix``), config, logs and
    evaluations, and no temporary file left behind."""
    checkpoints = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert checkpoints == [f"model_{n}_steps{suffix}" for n in checkpoint_steps]
    for name in ("config.yml", f"final_model{suffix}", f"best_model{suffix}", "progress.csv", "native.monitor.csv"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "evaluations.npz").is_file()
    assert list(run_dir.glob("events.out.tfevents.*"))
    assert not list(run_dir.rglob(".*tmp*")), "no temporary files left behind"
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"time/total_timesteps", "rollout/exploration_rate", "eval/mean_reward"} <= set(header)


def saved_mean_played(run_dir: Path) -> dict:
    """The agent state of ``run_dir``'s final model, checked to play the averaged network it saved
    (``averaged``), which is not its online one (``q``)."""
    import torch

    from agents.algorithms.policy import load_policy
    from agents.artifacts.runs import read_config
    from agents.session.checkpoint import load_checkpoint

    saved = load_checkpoint(run_dir / "final_model.pt")["agent"]
    played = load_policy(run_dir / "final_model.pt", read_config(run_dir)).q_net.state_dict()
    assert all(torch.equal(played[k], saved["averaged"][k]) for k in played)
    assert not all(torch.equal(saved["q"][k], saved["averaged"][k]) for k in played)
    return saved


class StoppedWhileFinalised:
    """Sends ``signum`` from its finalizer, where the handler's exception is printed and dropped."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        signal.raise_signal(self.signum)
