"""Celery tasks of the day-2 loop: thin; the chain's rules live in recycle.py."""

from celery import shared_task

from . import recycle


@shared_task(name="day2.tasks.start_recycle", bind=True, soft_time_limit=60, time_limit=90)
def start_recycle(self, op_id: int) -> str:
    try:
        return recycle.start(op_id)
    except Exception as exc:
        recycle.abort(op_id, f"internal error: {type(exc).__name__}: {exc}")
        raise
