"""Case statuses, resolutions and priorities: constants (+ display colour) only."""

from django.db import models


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    TRIAGED = "triaged", "Triaged"
    WITH_VENDOR = "with_vendor", "With vendor"
    AWAITING_PARTS = "awaiting_parts", "Awaiting parts"
    PARTS_REPLACED = "parts_replaced", "Parts replaced"
    CLOSED = "closed", "Closed"


class Resolution(models.TextChoices):
    REPAIRED = "repaired", "Repaired"
    NO_FAULT_FOUND = "no_fault_found", "No fault found"
    REPLACED_NODE = "replaced_node", "Node replaced"
    CANCELLED = "cancelled", "Cancelled"


class Priority(models.TextChoices):
    P1 = "p1", "P1 (critical)"
    P2 = "p2", "P2 (high)"
    P3 = "p3", "P3 (normal)"
    P4 = "p4", "P4 (low)"


class EventKind(models.TextChoices):
    OPENED = "opened", "Opened"
    TRANSITION = "transition", "Status change"
    UPDATE = "update", "Update"
    NOTE = "note", "Note"
    PART = "part", "Part swapped"


OPEN_STATUSES = frozenset(s for s in CaseStatus.values if s != CaseStatus.CLOSED)

STATUS_COLOURS = {
    CaseStatus.OPEN: "danger",
    CaseStatus.TRIAGED: "warning",
    CaseStatus.WITH_VENDOR: "info",
    CaseStatus.AWAITING_PARTS: "info",
    CaseStatus.PARTS_REPLACED: "primary",
    CaseStatus.CLOSED: "secondary",
}
