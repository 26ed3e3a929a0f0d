"""Inventory's parts of the engine's sweep (engine/sweep.py): operations and deadlines."""

from __future__ import annotations

from engine import sweep

from . import import_operations, operations, services, starting, watchdog


def deadlines() -> dict[str, int]:
    """Nodes past their state's deadline, operations past theirs or lost with their
    worker, locks whose holder stopped beating, queues nobody listens to, and the uploads
    of CSV imports that ended."""
    return {
        "nodes": services.expire_deadlines(),
        **watchdog.sweep(),
        "import_uploads": import_operations.purge_uploads(),
    }


def register() -> None:
    sweep.register(
        "operations.due",
        operations.send_due,
        None,
        "Sends the deferred operations whose time has come: retries after a transient "
        "error, waits for a busy node.",
    )
    sweep.register(
        "operations.republish",
        operations.republish,
        "CORRAL_REPUBLISH_SECONDS",
        "Sends operations accepted while the broker was down, and pending ones whose "
        "message was lost (a Redis restarted empty, a worker that died holding it).",
    )
    sweep.register(
        "inventory.deadlines",
        deadlines,
        "CORRAL_DEADLINE_SWEEP_SECONDS",
        "Fails nodes and operations past their deadlines and operations lost with their "
        "worker, breaks stale locks, says which queues have no worker.",
    )
    sweep.register(
        "plans.advance",
        starting.sweep,
        "CORRAL_REPUBLISH_SECONDS",
        "Moves on the declared plans (a recycle) whose last step ended but whose next was "
        "never started (that call was lost with its process).",
    )
