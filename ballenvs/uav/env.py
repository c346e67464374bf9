"""``UAVGrid-v0``: a UAV on a grid serving ground users' requests.

The gymnasium faces (:mod:`ballenvs.faces`) of :class:`ballenvs.uav.game.UAVGame`:
:class:`UAVGridEnv` runs one grid, :class:`UAVGridVectorEnv` (``gym.make_vec``) N at once.
"""

from __future__ import annotations

from ballenvs.faces import GameEnv, GameVectorEnv, metadata_for
from ballenvs.uav.game import RENDER_FPS, UAVGame


class UAVGridEnv(GameEnv):
    """A UAV on a ``size`` x ``size`` grid serves ``n_ues`` ground users (UEs).

    ## Description

    The grid has 100 x 100 integer cells (``size``). ``n_ues=10`` ground users sit at cells
    fixed for the env instance, clustered round ``n_hotspots=3`` hotspots drawn from
    ``layout_seed``. Each UE is idle or holds a request of class 1, 2 or 3: an idle UE raises
    one with probability ``request_prob=0.02`` a step, of a class drawn with
    ``class_probs=(0.5, 0.3, 0.2)``, and an unserved request expires after ``deadlines=(80, 50,
    30)`` steps. Every UE with a request within ``coverage_radius=8`` cells (Euclidean) of the
    UAV is served in that step and becomes idle. It is the two-input problem of the Keras agent
    the env was built for.

    ## Action Space

    ``Discrete(9)``: 0 stays, 1 to 8 move ``speed=2`` cells N, NE, E, SE, S, SW, W, NW; a move
    off the grid is clamped to the edge.

    ## Observation Space

    - ``obs_type="vector"`` (the default): ``Dict(pos=Box(0, 1, (2,), float32),
      requests=MultiDiscrete([4] * n_ues))``: the UAV's cell divided by ``size - 1``, and each
      UE's request class (0: idle). Policy: ``MultiInputPolicy``.
    - ``obs_type="image"`` (``UAVGridImage-v0``): ``Box(0, 255, (4, 64, 64), uint8)``,
      channel-first, centred on the UAV and spanning twice the grid, so the whole grid is
      always in view: channels 0 to 2 mark requests of class 1 to 3, brighter the more time
      they have left; channel 3 marks what lies outside the grid. ``obs_size`` (at least 36)
      sets the side; ``channels_last=True`` gives ``(64, 64, 4)``, the same picture with the
      channels last (Keras's and RLlib's layout, and the duel's frames'); ``pixel_dtype="float32"``
      the same picture as float32 in [0, 1], for libraries whose CNNs take float frames (Ray
      RLlib's; our trainers take the uint8 one). Policy: ``CnnPolicy``.

    ## Rewards

    The served requests' ``class_weights=(1, 2, 4)`` divided by the largest (a class-3 request
    is worth 1), less ``move_cost=0.002`` for a step that moves.

    ## Starting State

    The UAV at the centre (``random_start=True``: a random cell); each UE holds a request with
    probability ``initial_request_prob=0.5``.

    ## Episode End

    Never terminated; truncated after 300 steps, the registered time limit.

    ## Info

    ``served`` and ``served_weight`` of the step, ``episode_served`` and ``episode_weight`` so far;
    with ``state_info=True``, ``state``: the grid's state, exactly (int64: the UAV's x and y, then
    every UE's x, y, request class and time left), which ``greedy`` reads to teach a student that
    sees the image (``python -m agents.train --algo distill --env UAVGridImage-v0``).

    ## Arguments

    - ``obs_type``: ``"vector"`` or ``"image"``; ``obs_size``: the image's side (64 by default;
      the vector observation refuses it).
    - ``layout_seed``: the seed of the fixed UE layout, 0 by default; ``random_layout=True``
      draws a new layout at every reset (use the image observation then: the vector one does
      not say where the UEs are); ``random_start=True``: the UAV starts on a random cell;
      ``state_info=True``: the state in the info (above). Each takes True or False, not strings.
    - ``**params``: any field of :class:`ballenvs.uav.physics.UAVParams` (``size``, ``n_ues``,
      ``speed``, ``coverage_radius``, ``request_prob``, ``class_probs``, ``deadlines``,
      ``class_weights``, ``move_cost``, ``n_hotspots``, ``hotspot_spread``,
      ``initial_request_prob``).
    - ``render_mode``: None (the default), ``"rgb_array"`` (a 500x500x3 picture of the grid,
      UEs coloured by request class, the UAV and its coverage circle) or ``"human"``.
    - ``max_episode_steps``: the env's own time limit (see :class:`ballenvs.faces.GameEnv`).

    ## Version History

    - v0: the first version.
    """

    game_class = UAVGame
    metadata = metadata_for(RENDER_FPS)


class UAVGridVectorEnv(GameVectorEnv):
    """``num_envs`` UAV grids stepped together: ``gym.make_vec("UAVGrid-v0", num_envs=256)``.

    Takes the options of :class:`UAVGridEnv`; behaves as ``SyncVectorEnv`` over them.
    """

    game_class = UAVGame
    metadata = metadata_for(RENDER_FPS, vector=True)
