"""Q-networks as players of a two-player game (:class:`ballenvs.game.Player`), each seeing the game
as its model was trained to: its observation, through its own frame stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.artifacts.models import load_run_model
from agents.environments.frames import FrameStack
from ballenvs.backend import SCALAR
from ballenvs.game import Player, Seat
from ballenvs.reference import Arena, reference_for
from ballenvs.state import parts


def arena_of(env_id: str) -> Arena:
    """The arena of a two-player game (the command lines check ``env_id`` is one first)."""
    arena = reference_for(env_id).arena
    if arena is None:
        raise ValueError(f"{env_id} is a one-player game")
    return arena


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

    def get_state(self) -> dict[str, Any]:
        return {"frames": self.frames.get_state()}  # the network is its owner's to save

    def set_state(self, state: dict[str, Any]) -> None:
        self.frames.set_state(parts(state, ("frames",), "Q player")["frames"])
        stack, expected = self.frames.stack, self._stack_shape()
        if stack is not None and expected is not None and stack.shape[1:] != expected:
            raise ValueError(f"state Q player frames: expected stacks of {expected} a game, got {stack.shape[1:]}")

    def _stack_shape(self) -> tuple[int, ...] | None:
        """A game's stacked frames as the network reads them (channels last, as the stack holds
        them); None where the network is not yet known or reads several parts."""
        part = (getattr(self.q, "spec", None) or {}).get("parts", {}).get("")
        if part is None or "size" not in part and "shape" not in part:
            return None
        if part["kind"] == "image":
            channels, height, width = part["shape"]
            return (height, width, channels)
        return (part["size"],)

    def act(self, seat: Seat) -> Any:
        actions = self._q_values(seat).argmax(dim=1).cpu().numpy()
        return int(actions[0]) if seat.xp is SCALAR else actions

    def act_with_values(self, seat: Seat) -> tuple[np.ndarray, np.ndarray]:
        """The greedy actions of a batch (one game: a batch of one) and every action's Q-value."""
        values = self._q_values(seat).float()
        return values.argmax(dim=1).cpu().numpy(), values.cpu().numpy()

    def _q_values(self, seat: Seat) -> torch.Tensor:
        """The seat's observation through the frame stack and the network: (N, actions)."""
        observations = self.observer(seat.view, seat.xp) if self.observer is not None else seat.observe()
        batch = self.frames.push(observations[None] if seat.xp is SCALAR else observations)
        assert self.q is not None, "a Q player plays once its network is bound"
        with torch.inference_mode():
            return self.q(torch.as_tensor(batch, device=self.device))


def load_player(path: str | Path, device: str = "cpu") -> QPlayer:
    """Any model our commands write, as a player of the two-player game it learned: a run folder (its
    final model, else its best, else its interrupted one), or a model file in one (final, best,
    interrupted, a checkpoint; our ``.pt`` or stable-baselines3's ``.zip``). The player sees the game
    as its model was trained to (its observation type, frame size, frame stack, channel order, the
    clock) whatever the env it plays in shows, so it plays anywhere a player goes::

        import agents, gymnasium as gym
        champion = agents.load_player("runs/dqn/BallDuel-v0_1")
        env = gym.make("BallDuel-v0", opponent=champion)

    (also ``ballenvs.duel.match``'s players and ``agents.evaluate --opponent``). Its files are read as
    data (weights-only tensors, YAML, the zip's parameters): no code in them runs."""
    from agents.artifacts.models import find_model
    from agents.artifacts.runs import read_config
    from agents.common.errors import UsageError

    model_path, run_dir = find_model(path)
    env_id = read_config(run_dir)["env_id"]
    arena = reference_for(env_id).arena
    if arena is None:
        raise UsageError(f"{str(path)!r}: a model of {env_id}, a game with no opponent to play")
    return model_player(model_path, run_dir, device, arena)


def model_player(model_path: Path, run_dir: Path, device: str, arena: Arena) -> QPlayer:
    """A saved model of ``arena``'s game as a :class:`QPlayer` that sees the game through its own
    observation settings and frame stack."""
    policy, config = load_run_model(model_path, run_dir, device)
    hyper = config["hyperparams"]
    observer = arena.observer(dict(hyper.get("env_kwargs") or {}))
    return QPlayer(policy.q_net, device, hyper.get("frame_stack") or 1, observer)
