from celery import shared_task

from . import recording


@shared_task(name="consoles.tasks.record_console", ignore_result=True)
def record_console(node_id: int, operation_id: int | None, state: str) -> None:
    """Record a node's console while it stays in `state` (recording.py): long, on purpose."""
    recording.record(node_id, operation_id, state)
