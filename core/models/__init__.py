from .idempotency import IdempotencyRecord
from .tokens import RotatedToken

__all__ = ["IdempotencyRecord", "RotatedToken"]
