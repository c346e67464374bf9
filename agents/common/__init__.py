"""What several commands share, in rooms by concern, each importing only the rooms below it
(tests/contracts/test_layout.py):

- the ground, here: errors.py (UsageError), readers.py (hostile files read safely), stops.py
  (signals), threads.py and hardware.py (the machine), nstep_returns.py (the multi-step returns
  every replay buffer sums), tensors.py (observations between numpy and torch, for our learners);
- networks/: the network pieces a config section names, for SB3's DQN and ours;
- configuration/: config sections, hyperparameters, the algorithm registry, the memory a section takes.

It imports ``ballenvs`` and stable-baselines3's vector-env classes and no other room of ``agents``:
those build on it (the envs, the run folder, the session, the algorithms, the trainer, the studies), and the
registry (:mod:`agents.common.configuration.registry`) reaches them by module name only when asked.
"""
