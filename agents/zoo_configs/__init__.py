"""Hyperparameters in the RL Baselines3 Zoo format, shipped in the wheel as ``agents.zoo_configs``."""
