"""What the webhook pumps count (docs/metrics.md). No subscription label: subscriptions
are added by users; the failing one is named on its page and in the API."""

from __future__ import annotations

from core import metrics

from .delivery import Outcome

ATTEMPTS = metrics.counter(
    "corral_webhook_attempts",
    "POSTs to webhook receivers, by outcome: delivered (2xx), rejected (another HTTP "
    "status), unreachable (no answer), refused (the egress policy refused the address).",
    ["outcome"],
    app="webhooks",
)
ATTEMPT_SECONDS = metrics.histogram(
    "corral_webhook_attempt_duration_seconds",
    "How long a POST to a webhook receiver took.",
    buckets=metrics.CALL_BUCKETS,
    app="webhooks",
)
GAVE_UP = metrics.counter(
    "corral_webhook_deliveries_failed",
    "Deliveries given up for good (their retry window ended, or the address is refused).",
    app="webhooks",
)


def attempted(outcome: Outcome) -> None:
    if outcome.refused:
        word = "refused"
    elif outcome.ok:
        word = "delivered"
    elif outcome.unreachable:
        word = "unreachable"
    else:
        word = "rejected"
    ATTEMPTS.labels(word).inc()
    if not outcome.refused:
        ATTEMPT_SECONDS.observe(outcome.latency_ms / 1000)
