"""The session of a command: its flags and exits (cli.py), a run's checks and folder (setup.py,
memory.py), the Learner and the run's lifecycle (training.py), its milestones (milestones.py,
evaluation.py, console.py) and tracking (tracking.py)."""
