from .prices import GpuPrice
from .rollups import DayTotal, RackMonthTotal, RackReach, RolledDay, SiteDayTotal
from .spans import Episode, Span

__all__ = [
    "DayTotal",
    "Episode",
    "GpuPrice",
    "RackMonthTotal",
    "RackReach",
    "RolledDay",
    "SiteDayTotal",
    "Span",
]
