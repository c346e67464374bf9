"""UAVGrid: a UAV serving ground users' requests on a grid, and a greedy reference policy."""

from ballenvs.uav.env import UAVGridEnv
from ballenvs.uav.greedy import GreedyPolicy

__all__ = ["UAVGridEnv", "GreedyPolicy"]
