"""What happens at fixed env-step counts while a learner trains, for every algorithm: the console's
progress, the self-play pool's snapshots and swaps, checkpoints on the save grid and evaluations
on theirs (the best model kept). One mechanism both families feed: our loops call
:meth:`Milestones.on_step` from their hooks, stable-baselines3's DQN through a callback of a few
lines (:class:`agents.sb3.callbacks.FeedMilestones`).

The grids count from the learner's own step count, so a resumed run continues on the same grid.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from agents.artifacts.runs import BEST_MODEL, CHECKPOINTS, checkpoint_name
from agents.common.stops import DeferredStop
from agents.session.console import Console
from agents.session.evaluation import Evaluation, Evaluator


def next_multiple(steps: int, every: int) -> float:
    """The next multiple of ``every`` after ``steps`` (inf when ``every`` is 0: never). Steps come
    in strides of n_envs and a resumed run starts part-way, so schedules aim at the grid."""
    return (steps // every + 1) * every if every else float("inf")


class Pool(Protocol):
    """A self-play pool (:class:`agents.twoplayer.selfplay.SnapshotPool`) as the milestones drive it."""

    def start(self, steps: int) -> None: ...

    def on_step(self, steps: int) -> dict[str, float]:
        """Its snapshots and swaps due by ``steps``; the figures to log (none most steps)."""
        ...


class Saves(Protocol):
    """What the milestones ask of a learner: its model saved, and a policy that plays it."""

    def save(self, path: Path) -> None:
        """The model, written atomically (a checkpoint: continued by ``--resume``, played by the loaders)."""
        ...

    def policy(self) -> Any:
        """The model as it is now, playing through ``predict`` (the evaluations')."""
        ...


def best_model_saver(learner: Saves, run_dir: Path, suffix: str) -> Callable[[], None]:
    """What the evaluator calls when an evaluation beats every one before it: the best model saved
    (``suffix``: its algorithm's model files')."""
    return lambda: learner.save(run_dir / f"{BEST_MODEL}{suffix}")


class Milestones:
    """``save_freq``, ``eval_freq``: env steps between checkpoints (``suffix``: the algorithm's
    model files') and between evaluations (0: never); ``evaluator`` plays the evaluations (None
    when ``eval_freq`` is 0), ``logger`` writes each one's row. A learner that plays itself hands
    in its self-play pool when it starts learning (:meth:`start`)."""

    def __init__(
        self,
        learner: Saves,
        run_dir: Path,
        console: Console,
        logger: Any,
        suffix: str,
        save_freq: int = 0,
        evaluator: Evaluator | None = None,
        eval_freq: int = 0,
    ) -> None:
        self.learner, self.run_dir, self.console, self.logger, self.suffix = learner, run_dir, console, logger, suffix
        self.save_freq, self.evaluator, self.eval_freq = save_freq, evaluator if eval_freq else None, eval_freq
        self.pool: Pool | None = None
        self._next_save = self._next_eval = 0.0
        self.stop = DeferredStop()  # a stop asked for during the step: run_training hands in the one it watches

    def start(self, steps: int, pool: Pool | None = None) -> None:
        """Place the grids after ``steps``, the learner's step count when its learning starts; ``pool``:
        the learner's self-play pool, fed from then on."""
        self._next_save = next_multiple(steps, self.save_freq)
        self._next_eval = next_multiple(steps, self.eval_freq)
        self.pool = pool
        if pool is not None:
            pool.start(steps)

    def on_step(self, steps: int) -> bool:
        """After every vector-env step, with the learner's step count; False: a stop was asked
        for, training ends after this step."""
        self.console.update(steps)
        if self.pool is not None:
            for key, value in self.pool.on_step(steps).items():
                self.logger.record(key, value)
        if steps >= self._next_save:
            folder = self.run_dir / CHECKPOINTS
            folder.mkdir(exist_ok=True)
            self.learner.save(folder / checkpoint_name(steps, self.suffix))
            self._next_save = next_multiple(steps, self.save_freq)
        if steps >= self._next_eval and self.evaluator is not None:
            self.evaluate(steps)
            self._next_eval = next_multiple(steps, self.eval_freq)
        return self.stop.signum is None  # a stop ends training here, at a step's end

    def evaluate(self, steps: int) -> Evaluation | None:
        """An evaluation now, off the grid (a learner that needs its start's level asks for one
        before its first step): logged, the best model kept, as on the grid. None: the run is
        not evaluated (``eval_freq`` 0)."""
        if self.evaluator is None:
            return None
        self.evaluator(self.learner.policy(), steps)
        self.logger.dump(steps)
        return self.evaluator.latest

    @property
    def latest(self) -> Evaluation | None:
        """The last evaluation's outcome (None before the first, or when the run is not evaluated)."""
        return None if self.evaluator is None else self.evaluator.latest

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()
