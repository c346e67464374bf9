"""What every command's session shares, and what a run's learner calls back into, below the
algorithms: the flags and exits (cli.py), the console (console.py), whom it plays (opponents.py),
its evaluations and milestones (evaluation.py, milestones.py), tracking (tracking.py); and what a
run and its algorithm hand each other: what an algorithm module and its agent offer (contract.py),
the counters and schedules (progress.py), the calls a loop makes at its milestones and to log
(hooks.py), the checkpoints (checkpoint.py)."""
