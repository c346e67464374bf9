"""The network pieces a config section names, shared by stable-baselines3's DQN and ours: which
policy fits which observation space (policies.py), the lean CNN (lean_cnn.py) and DrQ's image
shifts (augment.py)."""
