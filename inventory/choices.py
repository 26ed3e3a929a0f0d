"""States, roles and protocols as constants, each with its display colour.

Colours are declared here once so the badge on the node list, the rack elevation and the
overview counts can never disagree. Values are Bootstrap contextual names.
"""

from django.db import models

from engine import choices


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
# States in which a node serves no jobs because something is being done to it or is wrong
# with it: what the health policy's rack and site limits and a campaign's room per rack
# count (with the nodes a recycle was accepted for: selectors.out_of_service). Ready,
# enrolled and decommissioned nodes were not serving, so taking one takes nothing away.
OUT_OF_SERVICE_STATES: frozenset[str] = TRANSITIONAL_STATES | {
    NodeState.DRAINED,
    NodeState.FAILED,
    NodeState.RMA,
}


# The Celery queue of work that is not tied to a site's BMC network (and of nodes not racked).
DEFAULT_QUEUE = "corral"


class NodeRole(models.TextChoices):
    """What a machine is for. The last three are the other trays of a rack built as one
    unit (an NVL72: NVSwitch trays, power shelves, a compute tray's DPUs, docs/racks.md):
    enrolled, inspected and watched through their BMCs like any node, never imaged."""

    COMPUTE = "compute", "Compute"
    STORAGE = "storage", "Storage"
    HEAD = "head", "Head"
    SWITCH = "switch", "NVSwitch tray"
    POWER_SHELF = "power_shelf", "Power shelf"
    DPU = "dpu", "DPU"


# Machines that boot an image and run jobs. The other roles are the trays around them
# (switch trays, power shelves, DPUs): actions that image a node, gate it or hand it to
# the scheduler are declared for these roles only (inventory.actions.Action.roles).
HOST_ROLES: frozenset[str] = frozenset({NodeRole.COMPUTE, NodeRole.STORAGE, NodeRole.HEAD})
# How a message names a node of each role ("r12-switch-1 is an NVSwitch tray: ...").
A_ROLE: dict[str, str] = {
    NodeRole.COMPUTE: "a compute node",
    NodeRole.STORAGE: "a storage node",
    NodeRole.HEAD: "a head node",
    NodeRole.SWITCH: "an NVSwitch tray",
    NodeRole.POWER_SHELF: "a power shelf",
    NodeRole.DPU: "a DPU",
}


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


# The engine's (engine/choices.py), named here for this app's callers.
OperationStatus = choices.OperationStatus
OPERATION_COLOURS = choices.OPERATION_COLOURS
DEFERRED = choices.DEFERRED
ACTIVE_OPERATION_STATUSES = choices.ACTIVE_OPERATION_STATUSES
FINISHED_OPERATION_STATUSES = choices.FINISHED_OPERATION_STATUSES


class BootMedia(models.TextChoices):
    """How a deploy at this site boots its node (docs/boot-modes.md)."""

    PXE = "pxe", "Network boot (PXE)"
    VIRTUAL_MEDIA = "virtual_media", "Virtual media only"
    VIRTUAL_MEDIA_OR_PXE = "virtual_media_or_pxe", "Virtual media, else network boot"


class AttestationPolicy(models.TextChoices):
    """May a node without a TPM quote be admitted at this site? (docs/attestation.md)"""

    REQUIRED = "required", "Attestation required"
    ALLOW_UNATTESTED = "allow_unattested", "Unattested nodes allowed"
