"""The two-player tools: models as players, self-play's snapshot pool, and the league's Elo.
Games are reached through their env id (``ballenvs.reference.reference_for``), never by name.
Imports ``agents.common``."""
