"""Configuration: config sections in the RL Zoo's format and their checks (config.py), every
algorithm's hyperparameters declared once (hyperparameters.py) and the algorithm registry
(registry.py)."""
