from .cases import Case, Part
from .events import CaseEvent
from .idempotency import IdempotencyRecord

__all__ = ["Case", "CaseEvent", "IdempotencyRecord", "Part"]
