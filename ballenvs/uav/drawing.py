"""The UAVGrid picture for people (``render()``), drawn on a :class:`ballenvs.render.Canvas`."""

from __future__ import annotations

from ballenvs.uav.physics import UAVParams, UAVState

BACKGROUND = (245, 245, 240)
GRID_LINE = (225, 225, 220)
IDLE = (170, 170, 170)
CLASS_COLORS = ((60, 170, 60), (240, 170, 30), (220, 50, 50))  # request class 1, 2, 3
UAV_COLOR = (40, 70, 200)
COVERAGE = (120, 150, 240)


def draw_uav(canvas, p: UAVParams, s: UAVState, steps: int, episode_served: int) -> None:
    """One grid: UEs coloured by request class (grey when idle), UAV and its coverage circle."""
    canvas.fill(BACKGROUND)
    spacing = max(1, p.size // 10)
    for line in range(0, p.size + 1, spacing):
        canvas.rect(line, 0, 0, p.size, GRID_LINE, width=1)
        canvas.rect(0, line, p.size, 0, GRID_LINE, width=1)
    canvas.circle(s.uav_x + 0.5, s.uav_y + 0.5, p.coverage_radius, COVERAGE, width=2)
    marker = max(0.6, p.size / 80)
    for x, y, request in zip(s.ue_x.tolist(), s.ue_y.tolist(), s.request.tolist()):
        color = CLASS_COLORS[request - 1] if request else IDLE
        canvas.circle(x + 0.5, y + 0.5, marker, color)
    canvas.rect(s.uav_x + 0.5 - marker, s.uav_y + 0.5 - marker, 2 * marker, 2 * marker, UAV_COLOR)
    canvas.text(f"step {steps}  served {episode_served}", color=(30, 30, 30))
