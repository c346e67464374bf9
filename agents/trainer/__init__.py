"""The one trainer, top to bottom: what ``python -m agents.train`` and its aliases run (run.py:
prepare, train, judge; command.py: its flags), a run's checks and folder (setup.py, sections.py),
the Learner protocol and the run's lifecycle (training.py), and a Learner for each algorithm
family (stable-baselines3's DQN: sb3.py; ours: modules.py; Ray RLlib's PPO: rllib.py)."""
