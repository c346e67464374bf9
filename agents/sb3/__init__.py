"""stable-baselines3's DQN as our tools use it: the model built from a config section and loaded
without unpickling anything, its replay buffers, its callbacks. Imports ``agents.common``; only
the SB3 trainer and the registry's loaders import this."""
