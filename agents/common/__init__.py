"""The library under every command line, in rooms by concern, each importing only the rooms
below it (tests/contracts/test_layout.py):

- the ground, here: errors.py (UsageError), readers.py (hostile files read safely), stops.py
  (signals), threads.py and hardware.py (the machine), nstep_returns.py (the multi-step returns
  every replay buffer sums);
- configuration/: config sections, hyperparameters, the algorithm registry, network pieces;
- environments/: env making and vector adapters;
- artifacts/: run folders, models, the RL Zoo's files, videos;
- session/: a command's flags and exits, a run's setup and lifecycle, milestones, tracking;
- studies/: tuning, comparison, datasets.

It imports ``ballenvs`` and stable-baselines3's vector-env classes, never ``agents.sb3``,
``agents.algorithms``, ``agents.twoplayer`` or ``agents.learners``: those build on it, and the registry
(:mod:`agents.common.configuration.registry`) reaches them by module name only when asked.
"""
