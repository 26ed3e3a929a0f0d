"""Periodic inventory housekeeping; thin wrappers over services."""

from celery import shared_task

from . import services


@shared_task(name="inventory.tasks.expire_deadlines", soft_time_limit=60, time_limit=90)
def expire_deadlines() -> int:
    return services.expire_deadlines()
