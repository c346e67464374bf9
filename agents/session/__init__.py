"""What every command's session shares, and what a run's learner calls back into, below the
algorithms: the flags and exits (cli.py), the console (console.py), whom it plays (opponents.py),
its evaluations and milestones (evaluation.py, milestones.py) and tracking (tracking.py)."""
