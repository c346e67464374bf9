"""stable-baselines3's DQN feeding the run's milestones (:class:`agents.session.milestones.Milestones`:
console, self-play pool, checkpoints, evaluations), the same object our own loops feed."""

from __future__ import annotations

import copy

import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.dqn.policies import DQNPolicy

from agents.session.milestones import Milestones, Pool


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


class AverageTail(BaseCallback):
    """``tail_averaging`` for SB3's DQN, as our DQN has it: over the run's last ``share``, after each
    round of updates, the online Q-network's weights folded into a uniform mean, held in a copy of
    the policy (:attr:`averaged`: what the run evaluates and saves; the online one trains on)."""

    def __init__(self, share: float) -> None:
        super().__init__()
        self.share = share
        self.averaged: DQNPolicy | None = None
        self.folds = 0
        self._updates_folded = -1  # the model's update count at the last fold

    def _on_step(self) -> bool:
        self.fold_new_updates()
        return True

    def _on_training_end(self) -> None:
        self.fold_new_updates()  # the updates after the last step's callback

    def fold_new_updates(self) -> None:
        model = self.model
        if model._current_progress_remaining >= self.share or model._n_updates == self._updates_folded:
            return
        self._updates_folded = model._n_updates
        policy = model.policy
        assert isinstance(policy, DQNPolicy)  # a DQN's
        if self.averaged is None:
            self.averaged = copy.deepcopy(policy)
            self.averaged.set_training_mode(False)
        else:
            averaged: list[torch.Tensor] = list(self.averaged.q_net.parameters())
            online: list[torch.Tensor] = list(policy.q_net.parameters())
            with torch.no_grad():
                torch._foreach_lerp_(averaged, online, 1.0 / (self.folds + 1))
        self.folds += 1
