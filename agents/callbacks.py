"""stable-baselines3 callbacks that write models atomically: never a half-written file."""

from __future__ import annotations

from pathlib import Path

from stable_baselines3.common.callbacks import BaseCallback

from agents.runs import BEST_MODEL, atomic_path


class AtomicCheckpoint(BaseCallback):
    """Save the model every ``save_freq`` env steps to ``<folder>/model_<steps>_steps.zip``."""

    def __init__(self, save_freq: int, folder: Path) -> None:
        super().__init__()
        self.save_freq = save_freq
        self.folder = Path(folder)
        self._next_save = save_freq

    def _init_callback(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._schedule_next()

    def _schedule_next(self) -> None:
        # The next multiple of save_freq: with n_envs > 1 steps come in strides, and a
        # resumed run starts part-way.
        self._next_save = (self.num_timesteps // self.save_freq + 1) * self.save_freq

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next_save:
            with atomic_path(self.folder / f"model_{self.num_timesteps}_steps.zip") as tmp:
                self.model.save(tmp)
            self._schedule_next()
        return True


class SaveBest(BaseCallback):
    """Used as EvalCallback's ``callback_on_new_best``: save the new best model atomically."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = Path(folder)

    def _on_step(self) -> bool:
        with atomic_path(self.folder / f"{BEST_MODEL}.zip") as tmp:
            self.model.save(tmp)
        return True
