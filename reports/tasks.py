"""Reports tasks: thin; the work is in reports.services."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="reports.tasks.roll", soft_time_limit=240, time_limit=300)
def roll() -> int:
    """Roll the finished days not rolled yet (a month per run at most); idempotent, so beat
    sends it often and a missed run is caught up by the next."""
    return services.roll_days(limit=31)
