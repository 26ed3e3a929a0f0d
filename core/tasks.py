"""Webhook tasks: thin; they take ids and the work is in core.pump / core.services.

Both run on CORRAL_WEBHOOK_QUEUE. Their time limits stay far inside
CORRAL_VISIBILITY_TIMEOUT (tests/test_broker_limits.py), so Redis never hands a pump that
is still running to a second worker; the lease would stop that second pump anyway.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from . import pump as pumping
from . import services

# A run hands over after CORRAL_WEBHOOK_PUMP_SECONDS; it may be inside one POST then.
PUMP_SOFT_LIMIT = int(
    settings.CORRAL_WEBHOOK_PUMP_SECONDS + settings.CORRAL_WEBHOOK_TIMEOUT_SECONDS + 60
)


@shared_task(
    name="core.tasks.pump",
    acks_late=True,
    ignore_result=True,
    soft_time_limit=PUMP_SOFT_LIMIT,
    time_limit=PUMP_SOFT_LIMIT + 60,
)
def pump(subscription_id: int) -> int:
    return pumping.run(subscription_id)


@shared_task(name="core.tasks.sweep", acks_late=True, soft_time_limit=60, time_limit=90)
def sweep() -> int:
    return services.sweep()
