"""The engine's one beat task."""

from celery import shared_task

from . import sweep as engine_sweep


@shared_task(name="engine.tasks.sweep", soft_time_limit=60, time_limit=engine_sweep.LEASE_SECONDS)
def sweep() -> dict[str, object]:
    """Beat (CORRAL_SWEEP_SECONDS): run the parts of the sweep that are due."""
    return engine_sweep.run()
