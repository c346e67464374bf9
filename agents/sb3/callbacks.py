"""stable-baselines3 callbacks for our runs: atomic checkpoints on the save grid, the shared
evaluation (:class:`agents.common.evaluation.Evaluator`), and progress on the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from agents.common.console import Console
from agents.common.evaluation import Evaluator
from agents.common.runs import checkpoint_name, next_multiple
from agents.sb3.dqn import save_model


class _Every(BaseCallback):
    """Calls ``_run`` at every multiple of ``every`` env steps, counted from the model's own step
    count (a resumed run continues on the same grid)."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every
        self._next = float(every)

    def _init_callback(self) -> None:
        # The callback's own counter is still 0 here: the model's is the run's.
        self._next = next_multiple(self.model.num_timesteps, self.every)

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._run()
            self._next = next_multiple(self.num_timesteps, self.every)
        return True

    def _run(self) -> None:
        raise NotImplementedError


class AtomicCheckpoint(_Every):
    """Save the model every ``save_freq`` env steps to ``<folder>/model_<steps>_steps.zip``."""

    def __init__(self, save_freq: int, folder: Path) -> None:
        super().__init__(save_freq)
        self.folder = Path(folder)

    def _init_callback(self) -> None:
        super()._init_callback()
        self.folder.mkdir(parents=True, exist_ok=True)

    def _run(self) -> None:
        save_model(self.model, self.folder / checkpoint_name(self.num_timesteps, ".zip"))


class Evaluate(_Every):
    """Run the evaluator every ``eval_freq`` env steps."""

    def __init__(self, evaluator: Evaluator, eval_freq: int) -> None:
        super().__init__(eval_freq)
        self.evaluator = evaluator

    def _run(self) -> None:
        self.evaluator(self.model, self.num_timesteps)
        self.logger.dump(self.num_timesteps)


class SelfPlayPool(BaseCallback):
    """Snapshots of the learner and the opponent's swaps, on their schedules (agents.twoplayer.selfplay)."""

    def __init__(self, pool: Any) -> None:
        """``pool``: an object with ``start(steps)`` and ``on_step(steps)`` (a SnapshotPool)."""
        super().__init__()
        self.pool = pool

    def _init_callback(self) -> None:
        self.pool.start(self.model.num_timesteps)

    def _on_step(self) -> bool:
        self.pool.on_step(self.num_timesteps)
        return True


class ConsoleProgress(BaseCallback):
    """The run's progress on the console, instead of stable-baselines3's own bar."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def _on_step(self) -> bool:
        self.console.update(self.num_timesteps)
        return True
