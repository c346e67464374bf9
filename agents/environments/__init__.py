"""Env making and vector adapters: the envs a run makes (envs.py), our native vector envs as
stable-baselines3's VecEnv (vec_env.py), frame stacking (frames.py), and the envs as our loops
step them (steps.py)."""
