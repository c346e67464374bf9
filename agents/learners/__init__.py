"""The algorithm families as the one trainer drives them: each a :class:`agents.session.training.Learner`
(stable-baselines3's DQN: :mod:`agents.learners.sb3`; ours: :mod:`agents.learners.modules`), and the
trainer itself (:mod:`agents.learners.trainer`: ``python -m agents.train`` and its aliases)."""
