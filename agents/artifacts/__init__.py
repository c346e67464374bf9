"""Run folders and models: the run folder's layout and atomic writes (runs.py), finding and
reading every model and snapshot (models.py), Q-networks as players of a two-player game
(model_players.py), the RL Zoo's files (zoo.py), videos (video.py)."""
