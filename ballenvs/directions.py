"""The nine actions both environments share: 0 = none, 1..8 = N, NE, E, SE, S, SW, W, NW."""

from __future__ import annotations

from typing import Any

import numpy as np

from ballenvs.backend import NUMPY

N_ACTIONS = 9
ACTION_NAMES = ("none", "N", "NE", "E", "SE", "S", "SW", "W", "NW")
#: Grid step of each action (+x east, +y north).
STEP_X = np.array([0, 0, 1, 1, 1, 0, -1, -1, -1])
STEP_Y = np.array([0, 1, 1, 0, -1, -1, -1, 0, 1])
#: The action that moves in the x-mirrored direction (E <-> W, NE <-> NW, ...).
MIRRORED_ACTION = np.array([0, 1, 8, 7, 6, 5, 4, 3, 2])

#: The action for each octant, indexed by (sign of y + 1) * 3 + (sign of x + 1).
_OCTANT_ACTION = np.array([6, 5, 4, 7, 0, 3, 8, 1, 2])
_TAN_22_5 = float(np.tan(np.pi / 8))


def heading_to_action(xp: Any, hx: Any, hy: Any) -> Any:
    """The action whose direction is closest to the heading (hx, hy); 0 for a zero heading.

    Works on floats (returns an int) and on arrays (returns an int array) alike.
    """
    # A component counts when the heading is more than 22.5 degrees away from the other axis;
    # the octant index is (sign y + 1) * 3 + (sign x + 1), summed from the four comparisons.
    tan_x, tan_y = _TAN_22_5 * abs(hx), _TAN_22_5 * abs(hy)
    octant = 4 + 1 * (hx > tan_y) - (hx < -tan_y) + 3 * (hy > tan_x) - 3 * (hy < -tan_x)
    return _OCTANT_ACTION[octant] if xp is NUMPY else int(_OCTANT_ACTION[octant])


def arrow_keys() -> dict[tuple[int, ...], int]:
    """Arrow keys (pygame key codes; two at once for the diagonals) to actions, as
    ``gymnasium.utils.play.play`` takes them (no key held: action 0). Imports pygame."""
    from ballenvs.render import import_pygame

    pygame = import_pygame()
    up, down, left, right = pygame.K_UP, pygame.K_DOWN, pygame.K_LEFT, pygame.K_RIGHT
    held = {1: (up,), 2: (up, right), 3: (right,), 4: (down, right), 5: (down,), 6: (down, left), 7: (left,), 8: (up, left)}
    return {tuple(sorted(keys)): action for action, keys in held.items()}
