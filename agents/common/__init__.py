"""The library under every command line: configs, run folders, model loading, envs (stable-baselines3's
``VecEnv`` is every trainer's env type, and ``vec_env.py`` adapts our native vector envs to it),
evaluation, the console, the training wrapper and the algorithm registry.

It imports ``ballenvs`` and stable-baselines3's vector-env classes, never ``agents.sb3``,
``agents.custom`` or ``agents.twoplayer``: those build on it, and the registry
(:mod:`agents.common.algorithms`) reaches them by module name only when asked.
"""
