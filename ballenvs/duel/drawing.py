"""The BallDuel picture for people (``render()``), drawn on a :class:`ballenvs.render.Canvas`."""

from __future__ import annotations

from ballenvs.duel.physics import DuelPhysics, DuelState

BACKGROUND = (20, 20, 30)
FLOOR = (60, 60, 75)
EDGE = (230, 230, 230)
LEFT_COLOR = (70, 160, 255)
RIGHT_COLOR = (255, 110, 70)


def draw_duel(canvas, state: DuelState, physics: DuelPhysics, steps: int, winner: str | None) -> None:
    """Ring, both balls (left blue, right orange) and the step count, for one game."""
    canvas.fill(BACKGROUND)
    canvas.circle(0.0, 0.0, physics.ring_radius, FLOOR)
    canvas.circle(0.0, 0.0, physics.ring_radius, EDGE, width=2)
    canvas.circle(state.lx, state.ly, physics.ball_radius, LEFT_COLOR)
    canvas.circle(state.rx, state.ry, physics.ball_radius, RIGHT_COLOR)
    status = f"step {steps}" if winner is None else f"step {steps}  winner: {winner}"
    canvas.text(status)
