"""Our own Q-learning agents: ``dqn.py`` and ``pqn.py`` each hold one algorithm, readable top to
bottom, over the shared pieces beside them (``networks.py``, ``buffer.py``, ``core.py``:
counters, hooks and the env steps of a training loop, ``checkpoint.py``). Imports
``agents.common``; never ``agents.sb3`` or ``agents.twoplayer``."""
