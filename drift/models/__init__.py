from .baselines import Baseline, BaselineRevision
from .cells import CellStatus, DriftCell, DriftEvent, NodeDrift

__all__ = ["Baseline", "BaselineRevision", "CellStatus", "DriftCell", "DriftEvent", "NodeDrift"]
