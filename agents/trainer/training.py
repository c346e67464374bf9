"""A run's lifecycle, the same for every algorithm: a :class:`Learner` (one per algorithm family)
is checked before the run folder exists (:func:`agents.trainer.setup.prepare_run`), started
inside :func:`starting` (Ctrl-C there removes the new folder), and trained by
:func:`run_training`, which feeds its :class:`agents.session.milestones.Milestones` and stops in
order (Ctrl-C saves an interrupted model).
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agents.artifacts.runs import FINAL_MODEL, INTERRUPTED_MODEL, REPLAY_BUFFER, SUMMARY_NAME, read_config, write_yaml
from agents.artifacts.zoo import write_zoo_files
from agents.common.errors import UsageError
from agents.common.stops import Interrupted, ignore_stops, signal_of, stopping_between_steps
from agents.session.milestones import Milestones, Saves
from agents.trainer.setup import Checked, Checks, RunSetup


class Learner(Checks[Checked], Saves, Protocol[Checked]):
    """One algorithm family as ``python -m agents.train`` drives it, in six members (stable-baselines3's
    DQN: :class:`agents.trainer.sb3.SB3Learner`; ours: :class:`agents.trainer.modules.ModuleLearner`;
    Ray RLlib's PPO: :class:`agents.trainer.rllib.RLlibLearner`). The registry names each
    algorithm's (:data:`agents.common.configuration.registry.ALGORITHMS`), with the suffix of its
    model files. Besides these: ``check`` (:class:`agents.trainer.setup.Checks`: everything the
    algorithm finds wrong, before the run folder exists), ``save`` and ``policy``
    (:class:`agents.session.milestones.Saves`). What only some learners have is a protocol of
    its own (:class:`QLearnerExtras`)."""

    def start(self, setup: RunSetup[Checked], logger: Any) -> Sequence[Any]:
        """Build the envs and the model (restored when resuming), logging to the run's ``logger``
        (stable-baselines3's, in the run folder); returns what the run closes at its end (its envs)."""
        ...

    @property
    def num_timesteps(self) -> int:
        """Env steps trained so far, the resumed run's included."""
        ...

    def learn(self, timesteps: int, milestones: Milestones) -> None:
        """Train ``timesteps`` more env steps, calling ``milestones.start`` once (with its self-play
        pool, if it plays itself) and ``milestones.on_step`` after every vector-env step."""
        ...


@runtime_checkable
class QLearnerExtras(Protocol):
    """What only the Q-learners offer (ours and stable-baselines3's DQN): updates that start after a
    number of steps, a replay buffer kept beside the model, and the Q-network as the RL Zoo's DQN."""

    @property
    def learning_starts(self) -> int:
        """The step its updates start at (the console says so until then)."""
        ...

    def save_replay_buffer(self, path: Path) -> None: ...

    def save_zoo_model(self, path: Path) -> None:
        """The model as an SB3 DQN ``.zip`` the RL Zoo loads (nothing for a network SB3 has not)."""
        ...


def close_quietly(envs: Iterable[Any], interrupted: bool) -> None:
    """Close the envs; after Ctrl-C, worker processes that already died are no error."""
    for env in envs:
        if interrupted:
            stop_workers(env)
        try:
            env.close()
        except (BrokenPipeError, EOFError, ConnectionResetError):
            if not interrupted:
                raise


def stop_workers(env: Any) -> None:
    """End a subprocess vector env's workers (under any VecEnv wrappers) without a word to them.
    Ctrl-C may have cut a step short between the workers' answers, and an orderly close would
    then wait for an answer already read: the trainer hung instead of saving."""
    while env is not None and not hasattr(env, "processes"):
        env = getattr(env, "venv", None)
    if env is None or getattr(env, "closed", True):
        return
    for process in env.processes:
        process.terminate()
    for process in env.processes:
        process.join(timeout=10)
    env.closed = True


@contextlib.contextmanager
def starting(setup: RunSetup) -> Iterator[None]:
    """Around what a trainer builds between its run folder and its first step (envs, model): Ctrl-C,
    a stop signal or bad input found there (a replay buffer that does not load) removes the new
    folder, which holds nothing but its config, and says so."""
    try:
        yield
    except UsageError:
        remove_new_run(setup)
        raise
    except KeyboardInterrupt as stop:
        ignore_stops()
        remove_new_run(setup)
        raise Interrupted("nothing was trained yet, and the new run folder was removed", signal_of(stop)) from None


def remove_new_run(setup: RunSetup) -> None:
    """The run folder, and the folders above it that this run made when nothing else is in them: a
    refused run leaves nothing written, and no folder that was there before goes."""
    shutil.rmtree(setup.run_dir, ignore_errors=True)
    for folder in setup.made_folders:
        with contextlib.suppress(OSError):  # another run's folder is there, or it is gone already
            folder.rmdir()


def run_training(setup: RunSetup, learner: Learner, milestones: Milestones, to_close: Sequence[Any]) -> Path:
    """Let ``learner`` learn for the run's steps, feeding ``milestones``; then save the final model
    and write the summary. Ctrl-C (or SIGTERM, SIGUSR1) saves the interrupted model instead and
    raises :class:`agents.common.stops.Interrupted` with its path; the console, the milestones'
    evaluation envs and ``to_close`` (the learner's envs, the logger) are closed either way."""
    start_steps, start, interrupted = learner.num_timesteps, time.perf_counter(), False
    try:
        with stopping_between_steps() as stop_asked:
            milestones.stop = stop_asked
            learner.learn(setup.timesteps, milestones)
        stop_asked.raise_if_stopped()
    except KeyboardInterrupt as stop:
        interrupted = True
        ignore_stops()  # a second Ctrl-C must not cut the save short
        milestones.console.close()
        saved = save_model(setup, learner, INTERRUPTED_MODEL)
        raise Interrupted(f"model saved to {saved}; continue with --resume {setup.run_dir}", signal_of(stop)) from None
    else:
        elapsed = time.perf_counter() - start
        milestones.console.close()
        save_model(setup, learner, FINAL_MODEL)  # before what the run closes: RLlib's learners may be Ray actors
    finally:
        milestones.console.close()
        milestones.close()
        close_quietly(to_close, interrupted)
    finish_run(setup.run_dir, learner.num_timesteps - start_steps, elapsed, learner.num_timesteps)
    return setup.run_dir


def save_model(setup: RunSetup, learner: Learner, name: str) -> Path:
    """The replay buffer first, then the model: a model beside no buffer means none was asked for.
    The final model also gets the RL Zoo's files (:func:`agents.artifacts.zoo.write_zoo_files`)."""
    run_dir = setup.run_dir
    extras = learner if isinstance(learner, QLearnerExtras) else None
    if setup.save_replay_buffer and extras is not None:  # prepare_run refused it for a learner without a buffer
        extras.save_replay_buffer(run_dir / REPLAY_BUFFER)
    path = run_dir / f"{name}{setup.algo.suffix}"
    learner.save(path)
    if name == FINAL_MODEL:
        write_zoo_files(run_dir, read_config(run_dir), None if extras is None else extras.save_zoo_model)
    return path


def finish_run(run_dir: Path, steps: int, seconds: float, total_steps: int) -> dict[str, Any]:
    """Write ``summary.yml`` (steps trained, seconds, steps/s) and print it in one line."""
    summary = {
        "steps": steps,
        "seconds": round(seconds, 3),
        "steps_per_s": round(steps / seconds, 1) if seconds > 0 else None,
        "total_steps": total_steps,
    }
    write_yaml(run_dir / SUMMARY_NAME, summary)
    rate = f"{summary['steps_per_s']} steps/s"
    print(f"trained {steps} steps in {seconds:.1f} s ({rate}); total steps: {total_steps}; run folder: {run_dir}")
    return summary
