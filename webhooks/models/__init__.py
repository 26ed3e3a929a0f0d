from .events import Delivery, DeliveryStatus, WebhookEvent
from .subscriptions import WebhookAudit, WebhookSubscription

__all__ = ["Delivery", "DeliveryStatus", "WebhookAudit", "WebhookEvent", "WebhookSubscription"]
