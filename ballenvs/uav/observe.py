"""What the UAV agent sees: the user's two inputs (position, request types) or a map image."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ballenvs.uav.core import N_CLASSES, UAVCore, UAVParams

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
        if core.num_envs is None:
            pos = np.array([s.uav_x / last, s.uav_y / last], dtype=np.float32)
        else:
            pos = (np.concatenate([s.uav_x, s.uav_y], axis=1) / last).astype(np.float32)
        return {"pos": pos, "requests": s.request.copy()}


class ImageObserver:
    """(4, obs_size, obs_size) uint8 map centred on the UAV, channel-first for CNN policies.

    It spans twice the grid, so the whole grid is in view wherever the UAV is. Channels
    0..2 mark the UEs with a request of class 1..3, brighter the more time the request has
    left; channel 3 marks what lies outside the grid.
    """

    def __init__(self, params: UAVParams, size: int) -> None:
        self.params = params
        self.size = size
        self.space = spaces.Box(0, 255, (N_CLASSES + 1, size, size), np.uint8)
        self._pixels_per_cell = size / (2 * params.size)
        # Which pixel columns (rows) lie outside the grid, for each UAV x (y): 255 or 0.
        offsets = (np.arange(size) + 0.5) / self._pixels_per_cell - params.size  # cells east of the UAV
        cells = np.arange(params.size)[:, None]
        self._outside_col = (((cells + offsets) < 0) | ((cells + offsets) >= params.size)) * np.uint8(255)
        self._outside_row = (((cells - offsets) < 0) | ((cells - offsets) >= params.size)) * np.uint8(255)
        # Brightness of a request by [class, time left]: 55 when about to expire, 255 when fresh.
        deadlines = np.array([1, *params.deadlines])[:, None]
        time_left = np.arange(max(params.deadlines) + 1)[None, :]
        self._brightness = (55 + 200 * np.minimum(time_left / deadlines, 1.0)).astype(np.uint8)

    def observe(self, core: UAVCore) -> np.ndarray:
        s, p = core.state, self.params
        one = core.num_envs is None
        # Work on (N, ...) arrays; one grid is N = 1.
        uav_x, uav_y = (np.array([s.uav_x]), np.array([s.uav_y])) if one else (s.uav_x[:, 0], s.uav_y[:, 0])
        request = s.request[None] if one else s.request
        images = np.zeros((len(request), N_CLASSES + 1, self.size, self.size), dtype=np.uint8)
        rows, cols = self._outside_row[uav_y], self._outside_col[uav_x]
        images[:, OUTSIDE_CHANNEL] = rows[:, :, None] | cols[:, None, :]
        game, ue = np.nonzero(request)
        if len(game):
            cls = request[game, ue]
            ue_x, ue_y, time_left = (a[None] if one else a for a in (s.ue_x, s.ue_y, s.time_left))
            # UE offsets from the UAV lie within +-(size - 1) cells, so these never leave the image.
            col = ((ue_x[game, ue] - uav_x[game] + p.size) * self._pixels_per_cell).astype(np.int64)
            row = ((uav_y[game] - ue_y[game, ue] + p.size) * self._pixels_per_cell).astype(np.int64)
            # Requests sharing a pixel keep the brightest.
            np.maximum.at(images, (game, cls - 1, row, col), self._brightness[cls, time_left[game, ue]])
        return images[0] if one else images
