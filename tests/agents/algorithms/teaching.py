"""What the tests of the learners with a teacher share: a short distill command line, the lean
network, and pixel envs that report the state."""

from __future__ import annotations

from agents.common.environments.steps import make_steps
from agents.common.networks.lean_cnn import LeanCNN

SUMO = ["--env", "BallSumo-v0"]
LEAN = {"features_extractor_class": LeanCNN, "net_arch": []}
#: The shipped section, small: 4 envs, the cheap scripts as the pool, a tiny buffer.
QUICK = [*SUMO, "--n-envs", "4", "--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]
QUICK += ["--hyperparams", "buffer_size=2000", "learning_starts=64", "batch_size=32"]
QUICK += ["self_play=dict(scripted='chaser,pusher', scripted_share=0.5, snapshot_steps=200, swap_steps=100)"]


def stacked_env(n: int, seed: int = 0):
    """BallSumo-v0's sub-pixel frames, 4 stacked, against chaser, with the state in the info."""
    kwargs = {"obs_type": "pixels", "obs_size": 36, "subpixel": True, "state_info": True, "opponent": "chaser"}
    return make_steps("BallSumo-v0", kwargs, n, seed, "native", 4)
