from .prices import GpuPrice
from .rollups import DayTotal, RackReach, RolledDay, SiteDayTotal
from .spans import Episode, Span

__all__ = ["DayTotal", "Episode", "GpuPrice", "RackReach", "RolledDay", "SiteDayTotal", "Span"]
