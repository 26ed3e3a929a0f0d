"""Inventory tasks; thin wrappers over services. (Its sweeps are parts of the engine's
sweep: inventory/sweeps.py.)"""

from celery import shared_task

from . import import_operations, operations


# A 20 MiB file (the largest accepted, ~130,000 rows) takes minutes, not tens of minutes.
@shared_task(name=import_operations.TASK, bind=True, soft_time_limit=1800, time_limit=1860)
def import_nodes(self, op_id: int) -> str:
    """A CSV import too large for its request (import_operations.start_import)."""
    return import_operations.run_import(op_id, worker=operations.worker_name(self.request.hostname))
