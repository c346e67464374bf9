"""Q-networks as players of a two-player game (:class:`ballenvs.game.Player`), each seeing the game
as its model was trained to: its observation, through its own frame stack."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.common.environments.frames import FrameStack
from ballenvs.backend import SCALAR
from ballenvs.game import Player, Seat


class QPlayer(Player):
    """A Q-network playing one side of N games with the greedy action. It sees the game as its
    model was trained to: the side's observation (the seat's, or its own ``observer(view, xp)``
    of the seat's view) through its own frame stack, which it clears for the games that restart."""

    def __init__(self, q: torch.nn.Module | None, device: str, frame_stack: int = 1, observer: Any = None) -> None:
        self.q, self.device = q, torch.device(device)
        self.frames = FrameStack(frame_stack)
        self.observer = observer

    def reset(self, games: np.ndarray | None) -> None:
        self.frames.reset(games)

    def act(self, seat: Seat) -> Any:
        observations = self.observer(seat.view, seat.xp) if self.observer is not None else seat.observe()
        one_game = seat.xp is SCALAR
        batch = self.frames.push(observations[None] if one_game else observations)
        with torch.inference_mode():
            actions = self.q(torch.as_tensor(batch, device=self.device)).argmax(dim=1).cpu().numpy()
        return int(actions[0]) if one_game else actions
