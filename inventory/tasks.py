"""Periodic inventory housekeeping; thin wrappers over services."""

from celery import shared_task

from . import operations, services, watchdog


@shared_task(name="inventory.tasks.republish_operations", soft_time_limit=60, time_limit=90)
def republish_operations() -> int:
    """Beat: send operations accepted while the broker was down."""
    return operations.republish()


@shared_task(name="inventory.tasks.expire_deadlines", soft_time_limit=60, time_limit=90)
def expire_deadlines() -> dict[str, int]:
    """Beat: nodes past their state's deadline, operations past theirs or lost with their
    worker, locks whose holder stopped beating, queues nobody listens to."""
    return {"nodes": services.expire_deadlines(), **watchdog.sweep()}
