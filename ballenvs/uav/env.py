"""``UAVGrid-v0``: a UAV on a grid serving ground users' requests.

The gymnasium faces (:mod:`ballenvs.faces`) of :class:`ballenvs.uav.game.UAVGame`:
:class:`UAVGridEnv` runs one grid, :class:`UAVGridVectorEnv` (``gym.make_vec``) N at once.
"""

from __future__ import annotations

from ballenvs.faces import GameEnv, GameVectorEnv, metadata_for
from ballenvs.uav.game import RENDER_FPS, UAVGame


class UAVGridEnv(GameEnv):
    """A UAV on a ``size`` x ``size`` grid serves ``n_ues`` ground users (UEs).

    Each step the UAV stays or moves ``speed`` cells in one of 8 directions (clamped at the
    edges). Idle UEs raise requests of class 1..3 at random; a request expires after its
    class's deadline. Every UE with a request within ``coverage_radius`` of the UAV is served
    at once. Reward: the served requests' class weights (1, 2, 4 by default) divided by the
    largest weight, minus ``move_cost`` per move. Never terminated; ``gym.make`` truncates
    episodes at 300 steps (its ``max_episode_steps`` changes that).

    Args:
        render_mode: None (default), "rgb_array" or "human".
        max_episode_steps: the env's own time limit (see :class:`ballenvs.faces.GameEnv`).
        obs_type: "vector" (default): ``Dict(pos=Box(0, 1, (2,)), requests=MultiDiscrete([4] * n_ues))``;
            "image": a (4, obs_size, obs_size) uint8 map centred on the UAV.
        obs_size: side of the image, at least 36 (64 by default); image observations only.
        layout_seed: seed of the fixed UE layout (hotspots), 0 by default.
        random_layout: draw a new layout at every reset (then use the image observation:
            the vector one does not say where the UEs are).
        random_start: start the UAV on a random cell instead of the centre.
        **params: any field of :class:`ballenvs.uav.core.UAVParams` (size, n_ues, speed,
            coverage_radius, request_prob, class_probs, deadlines, class_weights, move_cost,
            n_hotspots, hotspot_spread, initial_request_prob).

    Info: ``served`` and ``served_weight`` of the step, ``episode_served`` and
    ``episode_weight`` so far.
    """

    game_class = UAVGame
    metadata = metadata_for(RENDER_FPS)


class UAVGridVectorEnv(GameVectorEnv):
    """``num_envs`` UAV grids stepped together: ``gym.make_vec("UAVGrid-v0", num_envs=256)``.

    Takes the options of :class:`UAVGridEnv`; behaves as ``SyncVectorEnv`` over them.
    """

    game_class = UAVGame
    metadata = metadata_for(RENDER_FPS, vector=True)
