"""The outbox (one row per event) and its deliveries (one row per event × subscription)."""

from __future__ import annotations

from django.db import models


class WebhookEvent(models.Model):
    """Written in the transaction of the change it reports: it exists iff that committed.

    `body` is the exact JSON that is signed and sent, serialized once at emit time, so every
    attempt and every redelivery sends the same bytes; `data` is the same content, queryable.
    """

    msg_id = models.CharField(max_length=40, unique=True)
    type = models.CharField(max_length=40, db_index=True)
    timestamp = models.DateTimeField(db_index=True)
    data = models.JSONField(default=dict)
    body = models.TextField()

    class Meta:
        db_table = "core_webhookevent"  # its table from when it was core's
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.type} {self.msg_id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # gave up (CORRAL_WEBHOOK_RETRY_HOURS), or redelivered and gave up again


class Delivery(models.Model):
    """One event to one subscription. Marked succeeded only after the POST answered 2xx,
    so a worker lost mid-POST leaves it pending and it is sent again (same webhook-id)."""

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    subscription = models.ForeignKey(
        "webhooks.WebhookSubscription", on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt = models.DateTimeField()
    # Retries stop here (event time + CORRAL_WEBHOOK_RETRY_HOURS; a redelivery restarts it).
    give_up_at = models.DateTimeField()
    last_attempt = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_latency_ms = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "core_delivery"  # its table from when it was core's
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["event", "subscription"], name="delivery_unique_event_subscription"
            )
        ]
        indexes = [
            models.Index(
                fields=["subscription", "status", "next_attempt"], name="delivery_due_idx"
            ),
            models.Index(fields=["status", "next_attempt"], name="delivery_status_next_idx"),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.status})"
