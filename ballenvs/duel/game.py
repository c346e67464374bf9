"""BallDuel-v0's game: the learner against an opponent (:class:`DuelGame`, the
:class:`ballenvs.game.Game` behind ``BallDuel-v0`` and ``BallSumo-v0``), over the rules of
:mod:`ballenvs.duel.two_player_game` and a player of :mod:`ballenvs.duel.roster`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ballenvs._checks import check_bool
from ballenvs.duel.observe import state_of_view
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.roster import make_player
from ballenvs.duel.two_player_game import DUEL_OPTIONS, LEFT_WINS, RENDER_FPS, RIGHT_WINS, TwoPlayerDuel
from ballenvs.game import Game, Player
from ballenvs.state import parts

#: The options of BallDuel, besides render_mode and max_episode_steps.
OPTIONS = ("opponent", "state_info", *DUEL_OPTIONS)
__all__ = ["OPTIONS", "RENDER_FPS", "DuelGame"]


class DuelGame(Game):
    """BallDuel-v0's game: the learner plays the left ball of a :class:`TwoPlayerDuel`, an
    opponent (a built-in player or a policy, see :func:`ballenvs.duel.roster.make_player`)
    the right one. The learner's reward is the left side's.

    ``state_info=True`` adds ``info["state"]``: the learner's side of the game at that moment,
    exactly (float64, world units; :func:`ballenvs.duel.observe.state_of_view`): its ball's x, y,
    vx, vy, the other's, and the time left where the game has a clock, x mirrored for the right
    side. A teacher that sees the state plays from it while its student sees pixels; the
    observation ``obs_type="state"`` shows is made from it (:meth:`ballenvs.reference.Arena.state_observation`).
    Off by default: nothing extra is computed."""

    NAME = "BallDuel-v0"
    OPTIONS = OPTIONS

    def __init__(
        self, num_games: int | None = None, opponent: Any = "chaser", state_info: bool = False, **duel_options: Any
    ) -> None:
        self.num_games = num_games
        self.duel = TwoPlayerDuel(num_games, **duel_options)
        self.state_info = check_bool("state_info", state_info)
        self.opponent = make_player(opponent, self.duel.physics, self.duel.rules, self.duel.observation_space)
        self.observation_space = self.duel.observation_space
        self.action_space = self.duel.action_space
        self.render_spec = self.duel.render_spec(self.NAME)

    @property
    def steps(self) -> Any:
        return self.duel.steps

    def reset(self, rngs: Sequence[np.random.Generator], games: np.ndarray | None = None) -> None:
        self.duel.reset(rngs, games)
        self.opponent.reset(games)

    def step(
        self, actions: Any, rngs: Sequence[np.random.Generator], active: np.ndarray | None = None
    ) -> tuple[Any, Any, dict[str, Any]]:
        duel = self.duel
        opponent_actions = self.opponent.act(duel.seat(RIGHT, rngs, self.opponent))
        reward, terminated = duel.play(actions, opponent_actions)
        if type(self.opponent).finished is not Player.finished:  # most players keep no tally: nothing to compute
            ended = terminated if active is None else terminated & active  # inactive games are being reset
            if duel.xp.any(ended):
                # The right side's unshaped result: +1 when the left ball went out alone, -1 the other way.
                scores = (duel.winner == RIGHT_WINS) * 1.0 - (duel.winner == LEFT_WINS) * 1.0
                self.opponent.finished(None if duel.num_games is None else ended, scores)
        info = duel.info()
        if self.state_info:
            info.update(self.reset_info())
        return reward, terminated, info

    def reset_info(self) -> dict[str, Any]:
        if not self.state_info:
            return {}
        return {"state": state_of_view(self.duel.view(LEFT, self.duel.clock))}

    def get_state(self) -> dict[str, Any]:
        return {"duel": self.duel.get_state(), "opponent": self.opponent.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("duel", "opponent"), "game")
        self.duel.set_state(state["duel"])
        self.opponent.set_state(state["opponent"])

    def observe(self) -> np.ndarray:
        return self.duel.observe(LEFT)

    def draw(self, canvas: Any, game: int | None) -> None:
        self.duel.draw(canvas, game)
