"""An operation's statuses, and which are active or finished: the engine's vocabulary,
which every app that records work reads (inventory.choices re-exports them)."""

from django.db import models

from . import outbox


class OperationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    # A bulk action's child whose node could not take the action in its state: reported
    # with the reason, but no failure of the node or of the bulk.
    SKIPPED = "skipped", "Skipped"


OPERATION_COLOURS: dict[str, str] = {
    OperationStatus.PENDING: "secondary",
    OperationStatus.RUNNING: "info",
    OperationStatus.SUCCEEDED: "success",
    OperationStatus.FAILED: "danger",
    OperationStatus.CANCELLED: "dark",
    OperationStatus.SKIPPED: "light",
}

# Operation.task_id while it waits in the database for its `not_before` (operations.defer).
DEFERRED = outbox.DEFERRED
ACTIVE_OPERATION_STATUSES = frozenset({OperationStatus.PENDING, OperationStatus.RUNNING})
FINISHED_OPERATION_STATUSES = frozenset(
    {
        OperationStatus.SUCCEEDED,
        OperationStatus.FAILED,
        OperationStatus.CANCELLED,
        OperationStatus.SKIPPED,
    }
)
