"""The RMA case workflow: one table, one writer (like inventory/lifecycle.py).

Transitions are named by their target status (`POST …/transitions/triaged/`). Review the
whole machine here:

    to              from                                              needs
    triaged         open                                              -
    with_vendor     triaged                                           -
    awaiting_parts  with_vendor                                       -
    parts_replaced  triaged (a spare on site), with_vendor (vendor    -
                    swapped it on site), awaiting_parts
    closed          every status but closed                           a resolution

`transition()` is the only code that writes Case.status. It does so with a conditional
UPDATE (WHERE status = <from>) so two racing callers cannot both move a case, and appends
a CaseEvent in the same transaction. What closing does to the node (back through the loop,
or decommissioned) is rma/services.py's business, in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import DomainConflict
from core.statemachine import Machine, write

from .choices import CaseStatus as C
from .choices import EventKind, Resolution
from .models import Case, CaseEvent

_TABLE: list[tuple[str, tuple[str, ...]]] = [
    (C.TRIAGED, (C.OPEN,)),
    (C.WITH_VENDOR, (C.TRIAGED,)),
    (C.AWAITING_PARTS, (C.WITH_VENDOR,)),
    (C.PARTS_REPLACED, (C.TRIAGED, C.WITH_VENDOR, C.AWAITING_PARTS)),
    (
        C.CLOSED,
        (C.OPEN, C.TRIAGED, C.WITH_VENDOR, C.AWAITING_PARTS, C.PARTS_REPLACED),
    ),
]

# A transition is named by the status it enters (core.statemachine: event = target).
MACHINE = Machine((dst, sources, dst) for dst, sources in _TABLE)
# (from_status, to_status) pairs that are legal
TRANSITIONS: frozenset[tuple[str, str]] = frozenset(MACHINE.transitions)
NAMES: tuple[str, ...] = MACHINE.events


@dataclass
class IllegalCaseTransition(DomainConflict):
    """A transition the case's current status does not allow (HTTP 409)."""

    case: int
    status: str
    name: str

    @property
    def allowed(self) -> list[str]:
        return allowed_from(self.status)

    def __str__(self) -> str:
        allowed = ", ".join(self.allowed) or "none"
        return (
            f"RMA case {self.case} is {self.status}: '{self.name}' is not allowed from there "
            f"(allowed: {allowed})"
        )

    def payload(self) -> dict[str, Any]:
        return {"detail": str(self), "status": self.status, "allowed": self.allowed}


class ResolutionRequired(DomainConflict, ValueError):
    """Closing needs one of the resolutions; nothing else takes one (HTTP 400)."""

    http_status = 400

    def payload(self) -> dict[str, Any]:
        return {"resolution": [str(self)]}


def allowed_from(status: str) -> list[str]:
    return MACHINE.allowed(status)


def transition(case: Case, to: str, actor: str, note: str = "", resolution: str = "") -> CaseEvent:
    """Move `case` to `to`, or raise and change nothing. The in-memory case follows."""
    if to not in NAMES:
        raise IllegalCaseTransition(case=case.pk, status=case.status, name=to)
    if to == C.CLOSED and resolution not in Resolution.values:
        choices = ", ".join(Resolution.values)
        raise ResolutionRequired(f"closing a case needs a resolution: one of {choices}")
    if to != C.CLOSED and resolution:
        raise ResolutionRequired("only closing takes a resolution")
    with transaction.atomic():
        current = Case.objects.filter(pk=case.pk).values_list("status", flat=True).first()
        if current is None:
            raise Case.DoesNotExist(f"RMA case {case.pk} no longer exists")
        if MACHINE.target(current, to) is None:
            case.status = current
            raise IllegalCaseTransition(case=case.pk, status=current, name=to)
        now = timezone.now()
        fields: dict = {"status": to, "updated": now}
        if to == C.CLOSED:
            fields.update(closed=now, resolution=resolution)
        # The WHERE status=current makes a concurrent change lose cleanly.
        if not write(Case, case.pk, "status", current, fields):
            raise IllegalCaseTransition(case=case.pk, status=current, name=to)
        for key, value in fields.items():
            setattr(case, key, value)
        return CaseEvent.objects.create(
            case=case,
            kind=EventKind.TRANSITION,
            actor=actor,
            from_status=current,
            to_status=to,
            note=note if not resolution else f"{resolution}: {note}".rstrip(": "),
        )
