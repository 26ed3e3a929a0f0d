from .events import Delivery, DeliveryStatus, WebhookEvent
from .idempotency import IdempotencyRecord
from .subscriptions import WebhookAudit, WebhookSubscription
from .tokens import RotatedToken

__all__ = [
    "Delivery",
    "DeliveryStatus",
    "IdempotencyRecord",
    "RotatedToken",
    "WebhookAudit",
    "WebhookEvent",
    "WebhookSubscription",
]
