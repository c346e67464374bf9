"""Pictures for people, drawn with pygame: the one module that imports it, and only lazily.

Observations never come through here (they are numpy arrays drawn by each env); this is
``render()``: an "rgb_array" picture, or a window in "human" mode. pygame is imported when
the first :class:`Canvas` is made, so an env that is never rendered never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import logger

from ballenvs.game import RenderSpec

RENDER_MODES = ("human", "rgb_array")

Color = tuple[int, int, int]


def import_pygame() -> Any:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    return pygame


def check_render_mode(render_mode: object) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"unknown render_mode {render_mode!r}; valid: None, {', '.join(map(repr, RENDER_MODES))}")


class Canvas:
    """A square picture in world coordinates (y up), shown in a window in "human" mode.

    ``world_min`` and ``world_max`` bound the world shown along both axes.
    """

    def __init__(self, render_mode: str, size: int, world_min: float, world_max: float, fps: int, title: str) -> None:
        check_render_mode(render_mode)
        self._pygame = pygame = import_pygame()
        pygame.font.init()
        self.render_mode = render_mode
        self.size = size
        self.fps = fps
        self.title = title
        self._world_min = world_min
        self._scale = size / (world_max - world_min)
        self.surface = pygame.Surface((size, size))
        self._font = pygame.font.Font(None, max(14, size // 20))
        self._window: Any = None  # pygame's display surface and clock, made at the first human frame
        self._clock: Any = None

    def to_pixels(self, x: float, y: float) -> tuple[int, int]:
        return (round((x - self._world_min) * self._scale), round(self.size - (y - self._world_min) * self._scale))

    def length(self, world_length: float) -> int:
        return max(1, round(world_length * self._scale))

    def fill(self, color: Color) -> None:
        self.surface.fill(color)

    def circle(self, x: float, y: float, radius: float, color: Color, width: int = 0) -> None:
        self._pygame.draw.circle(self.surface, color, self.to_pixels(x, y), self.length(radius), width)

    def rect(self, x: float, y: float, w: float, h: float, color: Color, width: int = 0) -> None:
        """An axis-aligned rectangle whose lower-left corner is (x, y)."""
        left, top = self.to_pixels(x, y + h)
        self._pygame.draw.rect(self.surface, color, (left, top, self.length(w), self.length(h)), width)

    def text(self, text: str, color: Color = (255, 255, 255)) -> None:
        """A line of text in the top-left corner."""
        self.surface.blit(self._font.render(text, True, color), (6, 6))

    def finish(self) -> np.ndarray | None:
        """The picture as (size, size, 3) uint8 in "rgb_array" mode; in "human" mode, show it."""
        pygame = self._pygame
        if self.render_mode == "rgb_array":
            return np.ascontiguousarray(np.transpose(pygame.surfarray.array3d(self.surface), (1, 0, 2)))
        if self._window is None:
            pygame.display.init()
            pygame.display.set_caption(self.title)
            self._window = pygame.display.set_mode((self.size, self.size))
            self._clock = pygame.time.Clock()
        self._window.blit(self.surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self.fps)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._pygame.display.quit()
            self._window = None


class Renderer:
    """An env's ``render()``: makes its :class:`Canvas` (and imports pygame) on first use only.

    Constructing one is free, so every env holds one; ``render(draw)`` calls ``draw(canvas)``
    and returns the picture ("rgb_array") or shows it ("human"). A pickled renderer leaves its
    canvas (pygame objects) behind and makes a new one when next asked to draw.
    """

    def __init__(self, render_mode: str | None, spec: RenderSpec) -> None:
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.spec = spec
        self._canvas: Canvas | None = None

    def render(self, draw: Callable[[Canvas], None]) -> np.ndarray | None:
        if self.render_mode is None:
            title = self.spec.title
            logger.warn(f'render() called with render_mode=None; make {title} with render_mode="rgb_array" or "human"')
            return None
        if self._canvas is None:
            s = self.spec
            self._canvas = Canvas(self.render_mode, s.size, s.world_min, s.world_max, s.fps, s.title)
        draw(self._canvas)
        return self._canvas.finish()

    def close(self) -> None:
        if self._canvas is not None:
            self._canvas.close()
            self._canvas = None

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__ | {"_canvas": None}
