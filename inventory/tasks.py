"""Inventory tasks; thin wrappers over services."""

from celery import shared_task

from . import import_operations, operations, services, watchdog


@shared_task(name="inventory.tasks.republish_operations", soft_time_limit=60, time_limit=90)
def republish_operations() -> int:
    """Beat: send operations accepted while the broker was down."""
    return operations.republish()


@shared_task(name="inventory.tasks.expire_deadlines", soft_time_limit=60, time_limit=90)
def expire_deadlines() -> dict[str, int]:
    """Beat: nodes past their state's deadline, operations past theirs or lost with their
    worker, locks whose holder stopped beating, queues nobody listens to."""
    return {
        "nodes": services.expire_deadlines(),
        **watchdog.sweep(),
        "import_uploads": import_operations.purge_uploads(),
    }


# A 20 MiB file (the largest accepted, ~130,000 rows) takes minutes, not tens of minutes.
@shared_task(
    name=import_operations.TASK, bind=True, acks_late=True, soft_time_limit=1800, time_limit=1860
)
def import_nodes(self, op_id: int) -> str:
    """A CSV import too large for its request (import_operations.start_import)."""
    return import_operations.run_import(op_id, worker=operations.worker_name(self.request.hostname))
