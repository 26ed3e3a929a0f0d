"""Webhook tasks: thin; they take ids and the work is in webhooks.pump / webhooks.services.

Both run on CORRAL_WEBHOOK_QUEUE. A pump whose worker dies is started again by the sweep;
its lease stops a second pump on the same subscription while the first still runs.
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
    name="webhooks.tasks.pump",
    ignore_result=True,
    soft_time_limit=PUMP_SOFT_LIMIT,
    time_limit=PUMP_SOFT_LIMIT + 60,
)
def pump(subscription_id: int) -> int:
    return pumping.run(subscription_id)


@shared_task(name="webhooks.tasks.sweep", soft_time_limit=60, time_limit=90)
def sweep() -> int:
    return services.sweep()
