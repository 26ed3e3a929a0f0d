from __future__ import annotations

from celery import shared_task

from . import breaker, services


@shared_task(name="health.tasks.sweep", soft_time_limit=120, time_limit=150, ignore_result=True)
def sweep() -> int:
    """Beat: open the breaker if policy recycles failed since the last event (so the
    overview warns without waiting for one), then retry events held for capacity."""
    breaker.check()
    return services.reconsider_held()
