"""The two-player tools: self-play's snapshot pool, and the league's Elo and its entrants.
Games are reached through their env id (``ballenvs.reference.reference_for``), never by name.
Imports ``agents.common``."""
