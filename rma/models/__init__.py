from .cases import Case, Part
from .events import CaseEvent

__all__ = ["Case", "CaseEvent", "Part"]
