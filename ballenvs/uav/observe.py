"""What the UAV agent sees: the user's two inputs (position, request types) or a map image."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ballenvs.uav.physics import N_CLASSES, UAVCore, UAVParams

OBS_TYPES = ("vector", "image")
MIN_OBS_SIZE = 36  # the smallest image stable-baselines3's NatureCNN accepts
OUTSIDE_CHANNEL = N_CLASSES  # channels 0..2: request classes 1..3; channel 3: outside the grid


class VectorObserver:
    """``{"pos": UAV cell / (size - 1) in [0, 1]^2, "requests": each UE's request type 0..3}``."""

    def __init__(self, params: UAVParams) -> None:
        self.params = params
        self.space = spaces.Dict(
            {
                "pos": spaces.Box(0.0, 1.0, (2,), np.float32),
                "requests": spaces.MultiDiscrete([N_CLASSES + 1] * params.n_ues),
            }
        )

    def observe(self, core: UAVCore) -> dict[str, np.ndarray]:
        s, last = core.state, self.params.size - 1
        if core.num_games is None:
            pos = np.array([s.uav_x / last, s.uav_y / last], dtype=np.float32)
        else:
            pos = (np.concatenate([s.uav_x, s.uav_y], axis=1) / last).astype(np.float32)
        return {"pos": pos, "requests": s.request.copy()}


class ImageObserver:
    """(4, obs_size, obs_size) uint8 map centred on the UAV, channel-first for CNN policies
    (``channels_last``: (obs_size, obs_size, 4), as Keras, RLlib and the duel's frames lay images out).

    It spans twice the grid, so the whole grid is in view wherever the UAV is. Channels
    0..2 mark the UEs with a request of class 1..3, brighter the more time the request has
    left; channel 3 marks what lies outside the grid.
    """

    def __init__(self, params: UAVParams, size: int, channels_last: bool = False) -> None:
        self.params = params
        self.size = size
        self.channels_last = channels_last
        self.space = spaces.Box(
            0, 255, (size, size, N_CLASSES + 1) if channels_last else (N_CLASSES + 1, size, size), np.uint8
        )
        self._drawn_shape = (N_CLASSES + 1, size, size)  # drawn channel-first, moved last if asked
        pixels_per_cell = size / (2 * params.size)
        # Which pixel columns (rows) lie outside the grid, for each UAV x (y): 255 or 0.
        offsets = (np.arange(size) + 0.5) / pixels_per_cell - params.size  # cells east of the UAV
        cells = np.arange(params.size)[:, None]
        self._outside_col = (((cells + offsets) < 0) | ((cells + offsets) >= params.size)) * np.uint8(255)
        self._outside_row = (((cells - offsets) < 0) | ((cells - offsets) >= params.size)) * np.uint8(255)
        # The pixel column of a cell d cells east of the UAV (row: d cells south), at d + size;
        # offsets lie within +-(size - 1), so every UE falls inside the image.
        self._pixel = (np.arange(2 * params.size) * pixels_per_cell).astype(np.int64)
        # Brightness of a request by [class, time left]: 55 when about to expire, 255 when fresh.
        deadlines = np.array([1, *params.deadlines])[:, None]
        time_left = np.arange(max(params.deadlines) + 1)[None, :]
        self._brightness = (55 + 200 * np.minimum(time_left / deadlines, 1.0)).astype(np.uint8)

    def observe(self, core: UAVCore) -> np.ndarray:
        s, size = core.state, self.params.size
        # One grid indexes its (n_ues,) arrays with (ue,), N grids their (N, n_ues) arrays
        # with (game, ue); the stamping below serves both.
        if core.num_games is None:
            images = np.zeros(self._drawn_shape, dtype=np.uint8)
            outside_rows, outside_cols = self._outside_row[s.uav_y][:, None], self._outside_col[s.uav_x]
            where: tuple[np.ndarray, ...] = (np.flatnonzero(s.request),)
            shift_x, shift_y = size - s.uav_x, size + s.uav_y
        else:
            images = np.zeros((core.num_games, *self._drawn_shape), dtype=np.uint8)
            outside_rows, outside_cols = (
                self._outside_row[s.uav_y[:, 0]][:, :, None],
                self._outside_col[s.uav_x[:, 0]][:, None, :],
            )
            where = np.nonzero(s.request)
            shift_x, shift_y = size - s.uav_x[where[0], 0], size + s.uav_y[where[0], 0]
        np.bitwise_or(outside_rows, outside_cols, out=images[..., OUTSIDE_CHANNEL, :, :])
        if len(where[-1]):
            cls = s.request[where]
            col, row = self._pixel[s.ue_x[where] + shift_x], self._pixel[shift_y - s.ue_y[where]]
            # Requests sharing a pixel keep the brightest.
            np.maximum.at(images, (*where[:-1], cls - 1, row, col), self._brightness[cls, s.time_left[where]])
        return np.ascontiguousarray(np.moveaxis(images, -3, -1)) if self.channels_last else images
