"""Ray RLlib's PPO on our envs (``python -m agents.train --algo rllib_ppo``; ``pip install
"ballenvs[rllib]"``): the duel's self-play on RLlib's multi-agent API with a pool like ours
(:mod:`agents.rllib.duel_pool`), the games' winners as metrics (:mod:`agents.rllib.metrics`), and its
policies as our players, rebuilt in torch from the weights alone (:mod:`agents.rllib.network`,
which needs no Ray). The learner that drives it is :class:`agents.trainer.rllib.RLlibLearner`."""

#: The module a run trains, as its checkpoint names it: self-play's (beside its snapshots' slots) or RLlib's default.
LEARNER, SINGLE_MODULE = "learner", "default_policy"
