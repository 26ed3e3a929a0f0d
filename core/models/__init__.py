from .events import Delivery, DeliveryStatus, WebhookEvent
from .idempotency import IdempotencyRecord
from .subscriptions import WebhookAudit, WebhookSubscription

__all__ = [
    "Delivery",
    "DeliveryStatus",
    "IdempotencyRecord",
    "WebhookAudit",
    "WebhookEvent",
    "WebhookSubscription",
]
