"""Studies over runs: tuning (tuning.py, storage.py), comparison (comparison.py, intervals.py:
rliable's statistics), and datasets of recorded games (datasets.py)."""
