"""Command-line pieces the tests share: tiny but real runs of the trainers and the tools on them."""

from __future__ import annotations


def tiny_run(timesteps: int = 400, eval_freq: int = 200, eval_episodes: int = 2, n_envs: int = 2) -> list[str]:
    """A few hundred steps on two envs, evaluated: the flags agents.compare and agents.tune pass on."""
    return ["--timesteps", str(timesteps), "--eval-freq", str(eval_freq), "--eval-episodes", str(eval_episodes)] + [
        "--n-envs",
        str(n_envs),
    ]


#: Training starts, checkpoints and evaluations happen, in seconds.
FAST = ["--hyperparams", "buffer_size=1000", "learning_starts=200", "--save-freq", "200", "--eval-freq", "400"]
FAST += ["--eval-episodes", "1", "--no-progress"]
#: A small replay buffer that fills quickly, no evaluations.
TINY = ["--hyperparams", "buffer_size=500", "learning_starts=100", "--eval-freq", "0", "--no-progress"]
#: Short UAVGrid episodes on two envs.
UAV = ["--env", "UAVGrid-v0", "--n-envs", "2", "--env-kwargs", "max_episode_steps=50"]
