"""Training and evaluation of DQN agents on the ballenvs environments.

``agents`` imports ``ballenvs``, never the reverse.
"""
