"""stable-baselines3's DQN feeding the run's milestones (:class:`agents.common.session.milestones.Milestones`:
console, self-play pool, checkpoints, evaluations), the same object our own loops feed."""

from __future__ import annotations

from stable_baselines3.common.callbacks import BaseCallback

from agents.common.session.milestones import Milestones, Pool


class FeedMilestones(BaseCallback):
    """``pool``: the learner's self-play pool, handed to the milestones as learning starts."""

    def __init__(self, milestones: Milestones, pool: Pool | None = None) -> None:
        super().__init__()
        self.milestones, self.pool = milestones, pool

    def _init_callback(self) -> None:
        # The callback's own counter is still 0 here: the model's is the run's (a resumed one's too).
        self.milestones.start(self.model.num_timesteps, self.pool)

    def _on_step(self) -> bool:
        return self.milestones.on_step(self.num_timesteps)
