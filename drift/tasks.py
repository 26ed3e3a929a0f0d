"""Drift tasks: thin; the work is in drift.services."""

from __future__ import annotations

from celery import shared_task

from . import selectors, services


@shared_task(name="drift.tasks.sweep", soft_time_limit=240, time_limit=300)
def sweep() -> int:
    """Recompute nodes a baseline change, an edited node or a new node has not reached.
    Sent on commit after a baseline save and by beat as the safety net; idempotent."""
    return services.recompute(selectors.needing_recompute())
