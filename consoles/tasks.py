from celery import shared_task

from . import relay


@shared_task(name="consoles.tasks.record_console", ignore_result=True)
def record_console(node_id: int, operation_id: int | None, state: str) -> None:
    """Record a node's console while it stays in `state` (recording.py): long, on purpose."""
    relay.record(node_id, operation_id, state)


@shared_task(name="consoles.tasks.relay_console", ignore_result=True)
def relay_console(node_id: int) -> None:
    """Hold a node's console for the people watching it live (relay.py): as long as they
    watch; a duplicate finds the relay running and returns at once."""
    relay.serve(node_id)
