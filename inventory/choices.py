"""States, roles and protocols as constants, each with its display colour.

Colours are declared here once so the badge on the node list, the rack elevation and the
overview counts can never disagree. Values are Bootstrap contextual names.
"""

from django.db import models

from engine import outbox


class NodeState(models.TextChoices):
    ENROLLED = "enrolled", "Enrolled"
    INSPECTING = "inspecting", "Inspecting"
    READY = "ready", "Ready"
    DEPLOYING = "deploying", "Deploying"
    VALIDATING = "validating", "Validating"
    IN_SERVICE = "in_service", "In service"
    DRAINING = "draining", "Draining"
    DRAINED = "drained", "Drained"
    FAILED = "failed", "Failed"
    RMA = "rma", "RMA"
    DECOMMISSIONED = "decommissioned", "Decommissioned"


STATE_COLOURS: dict[str, str] = {
    NodeState.ENROLLED: "secondary",
    NodeState.INSPECTING: "info",
    NodeState.READY: "primary",
    NodeState.DEPLOYING: "info",
    NodeState.VALIDATING: "info",
    NodeState.IN_SERVICE: "success",
    NodeState.DRAINING: "warning",
    NodeState.DRAINED: "warning",
    NodeState.FAILED: "danger",
    NodeState.RMA: "danger",
    NodeState.DECOMMISSIONED: "dark",
}

# States a node passes through while work runs; each has a deadline.
TRANSITIONAL_STATES: frozenset[str] = frozenset(
    {NodeState.INSPECTING, NodeState.DEPLOYING, NodeState.VALIDATING, NodeState.DRAINING}
)


# The Celery queue of work that is not tied to a site's BMC network (and of nodes not racked).
DEFAULT_QUEUE = "corral"


class NodeRole(models.TextChoices):
    COMPUTE = "compute", "Compute"
    STORAGE = "storage", "Storage"
    HEAD = "head", "Head"


class BMCProtocol(models.TextChoices):
    REDFISH = "redfish", "Redfish"
    IPMI = "ipmi", "IPMI"


class PowerState(models.TextChoices):
    ON = "on", "On"
    OFF = "off", "Off"
    UNKNOWN = "unknown", "Unknown"


POWER_COLOURS: dict[str, str] = {
    PowerState.ON: "success",
    PowerState.OFF: "secondary",
    PowerState.UNKNOWN: "light",
}


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


class AttestationPolicy(models.TextChoices):
    """May a node without a TPM quote be admitted at this site? (docs/attestation.md)"""

    REQUIRED = "required", "Attestation required"
    ALLOW_UNATTESTED = "allow_unattested", "Unattested nodes allowed"
