"""Our own algorithms, one file each, readable top to bottom: ``dqn.py`` (our DQN, ``--algo custom``),
``pqn.py``, ``distill.py`` (a pixel student of a teacher), ``kickstart.py`` (DQN kickstarted by
one), ``finetune.py`` (DQN fine-tuned from a model that plays, without unlearning it), ``ppo.py``
(PPO's actor-critic on PQN's rollouts, from nothing or fine-tuned from such a model). Beside
them, one concern a file: ``warm_start.py`` (the start, the evidence that releases its pull: finetune's
and PPO's), ``rollouts.py`` (the rollouts PQN and PPO learn from, and their loop), ``registered.py`` (a
registered module, the members it left out filled in), ``qlearner.py`` (the Q-network, optimiser and exploration
the Q-learners share), ``networks.py``, ``buffer.py``, ``policy.py``. What every algorithm hands the run
and the run hands it (the contract, its counters, the loop's hooks, checkpoints) is the session's, below. Imports
``agents.common``, ``agents.session``; never ``agents.sb3`` or ``agents.twoplayer``."""
