"""Who wants which events, where, with which secret; and how their endpoint is doing."""

from __future__ import annotations

from django.db import models

from core.fields import EncryptedTextField


class WebhookSubscription(models.Model):
    """An endpoint that receives signed POSTs for the event types it lists.

    The delivery bookkeeping lives on the row the pump leases (`pump_*`, `retry_at`,
    `failing`): one pump per subscription at a time, and an endpoint that is down is backed
    off as a whole instead of once per pending delivery.
    """

    url = models.CharField(max_length=500, help_text="http(s) URL the events are POSTed to.")
    events = models.JSONField(default=list, help_text="Event types (webhooks.outbox.EVENT_TYPES).")
    description = models.CharField(max_length=200, blank=True)
    # `whsec_<base64>`: shown once (create, rotate), stored encrypted, never logged.
    secret = EncryptedTextField(editable=False)
    enabled = models.BooleanField(default=True, db_index=True)

    # Health: `failing` once attempts kept failing (webhooks.backoff.is_failing); cleared by the
    # next success. `first_failure_at` starts the current run of failures.
    failing = models.BooleanField(default=False, editable=False)
    failing_since = models.DateTimeField(null=True, blank=True, editable=False)
    first_failure_at = models.DateTimeField(null=True, blank=True, editable=False)
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)
    last_success_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The endpoint refused connections or timed out: nothing is sent before this time, and
    # `backoff_step` picks the next wait if it is still down then.
    retry_at = models.DateTimeField(null=True, blank=True, editable=False)
    backoff_step = models.PositiveSmallIntegerField(default=0, editable=False)

    # The pump's lease (webhooks.pump): a conditional UPDATE takes it; a second pump goes away.
    pump_token = models.CharField(max_length=32, blank=True, editable=False)
    pump_lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    created_by = models.CharField(max_length=150, editable=False)

    class Meta:
        db_table = "core_webhooksubscription"  # its table from when it was core's
        ordering = ["id"]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"

    def wants(self, event_type: str) -> bool:
        return self.enabled and event_type in (self.events or ())


class WebhookAudit(models.Model):
    """Append-only record of every change to a subscription, with its actor (the way
    LifecycleEvent records node changes). `changes` never holds the secret."""

    subscription_pk = models.BigIntegerField(db_index=True)
    action = models.CharField(max_length=30)
    actor = models.CharField(max_length=150)
    changes = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "core_webhookaudit"  # its table from when it was core's
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"webhook {self.subscription_pk} {self.action} by {self.actor}"
