"""Configuration: config sections in the RL Zoo's format and their checks (config.py), every
algorithm's hyperparameters declared once (hyperparameters.py), the algorithm registry
(algorithms.py), and the network pieces a section names (policies.py, lean_cnn.py, augment.py)."""
