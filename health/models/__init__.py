from .breaker import BreakerState
from .events import HealthEvent
from .policies import HealthPolicy

__all__ = ["BreakerState", "HealthEvent", "HealthPolicy"]
