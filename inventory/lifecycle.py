"""The node lifecycle: one table, one writer.

Callers send events ("inspect", "fail", ...), never target states. `transition()` is the
only code that writes Node.state; it does so with a conditional UPDATE (WHERE state =
<from>) so two racing callers cannot both move a node, and it appends a LifecycleEvent in
the same transaction. Review the whole machine here:

    event           from                                             to
    inspect         enrolled, failed                                 inspecting
    inspected       inspecting                                       ready
    deploy          ready, drained, failed                           deploying
    booted          deploying                                        validating
    rebooted        ready, in_service                                deploying
    validate        failed, drained, in_service                      validating
    admit           validating                                       in_service
    hardware_fault  validating                                       rma
    drain           in_service, failed                               draining
    drained         draining                                         drained
    undrain         draining, drained                                in_service
    fail            inspecting, deploying, validating, draining      failed
    rma             failed, drained                                  rma
    repaired        rma                                              inspecting
    decommission    enrolled, ready, drained, failed, rma            decommissioned
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from core.doctables import between
from core.errors import DomainConflict
from core.statemachine import Machine, write
from webhooks import outbox

from .choices import TRANSITIONAL_STATES
from .choices import NodeState as S
from .models import LifecycleEvent, Node, Operation
from .notify import node_data

_TABLE: list[tuple[str, tuple[str, ...], str]] = [
    ("inspect", (S.ENROLLED, S.FAILED), S.INSPECTING),
    ("inspected", (S.INSPECTING,), S.READY),
    ("deploy", (S.READY, S.DRAINED, S.FAILED), S.DEPLOYING),
    ("booted", (S.DEPLOYING,), S.VALIDATING),
    # A stateless node that boots on its own (a power loss, a reset, the OS rebooting) has
    # no disk to boot: asking for its boot script starts a deploy of its image again.
    ("rebooted", (S.READY, S.IN_SERVICE), S.DEPLOYING),
    ("validate", (S.FAILED, S.DRAINED, S.IN_SERVICE), S.VALIDATING),
    ("admit", (S.VALIDATING,), S.IN_SERVICE),
    ("hardware_fault", (S.VALIDATING,), S.RMA),
    ("drain", (S.IN_SERVICE, S.FAILED), S.DRAINING),
    ("drained", (S.DRAINING,), S.DRAINED),
    # Back to work without a reimage (a drain cancelled, or nothing wrong after all): the
    # scheduler resumes the node (provisioning.draining.undrain).
    ("undrain", (S.DRAINING, S.DRAINED), S.IN_SERVICE),
    ("fail", (S.INSPECTING, S.DEPLOYING, S.VALIDATING, S.DRAINING), S.FAILED),
    ("rma", (S.FAILED, S.DRAINED), S.RMA),
    ("repaired", (S.RMA,), S.INSPECTING),
    ("decommission", (S.ENROLLED, S.READY, S.DRAINED, S.FAILED, S.RMA), S.DECOMMISSIONED),
]

MACHINE = Machine(_TABLE)
# (from_state, event) -> to_state
TRANSITIONS: dict[tuple[str, str], str] = MACHINE.transitions
EVENTS: frozenset[str] = frozenset(MACHINE.events)
# The events that work reports as it ends (an inspection read the BMC, a node phoned home,
# the gates passed); no node action starts them. Every other event is some app's action
# (checks.py refuses a start-up where one is missing).
REPORTED = frozenset(
    {"inspected", "booted", "rebooted", "admit", "hardware_fault", "drained", "fail"}
)


MARK = "<!-- lifecycle_table -->"


def table() -> str:
    """The transition table as Markdown (docs/architecture.md, between MARKs), in the
    order it is declared."""
    return MACHINE.markdown()


def refresh(page: str) -> str:
    """`page` with the text between its two MARKs replaced by the current table."""
    return between(page, MARK, table())


@dataclass
class IllegalTransition(DomainConflict):
    """Raised for an event the node's current state does not accept (HTTP 409)."""

    node: str
    state: str
    event: str

    @property
    def allowed(self) -> list[str]:
        return allowed_events(self.state)

    def __str__(self) -> str:
        allowed = ", ".join(self.allowed) or "none"
        return (
            f"{self.node} is {self.state}: '{self.event}' is not allowed in that state "
            f"(allowed: {allowed})"
        )

    def payload(self) -> dict[str, Any]:
        return {"detail": str(self), "state": self.state, "allowed": self.allowed}


def allowed_events(state: str) -> list[str]:
    return sorted(MACHINE.allowed(state))


def states_accepting(event: str) -> frozenset[str]:
    return MACHINE.accepting(event)


def target_of(state: str, event: str) -> str | None:
    return MACHINE.target(state, event)


def deadline_for(state: str) -> datetime | None:
    if state not in TRANSITIONAL_STATES:
        return None
    return timezone.now() + timedelta(seconds=settings.CORRAL_STATE_DEADLINES[state])


# What runs in the transaction of every transition, right after its event row is written:
# the apps above inventory register here from their `ready()` (name -> function(event)), so
# the lifecycle names none of them and every consequence of a transition is in one list
# (`manage.py shell -c "from inventory.lifecycle import HOOKS; print(HOOKS)"`). Today:
# reports keep the node's state spans; provisioning closes a deployment its node left;
# trays assess again the readiness of the rack a tray belongs to; consoles start recording
# the console of a node that begins to deploy or run its gates.
TransitionHook = Callable[[LifecycleEvent], None]
HOOKS: dict[str, TransitionHook] = {}


def on_transition(name: str, hook: TransitionHook) -> None:
    """Run `hook(event)` in every transition's transaction (a hook that raises undoes the
    transition: it is part of it)."""
    if HOOKS.get(name, hook) is not hook:
        raise ImproperlyConfigured(f"a transition hook named {name!r} is registered twice")
    HOOKS[name] = hook


def transition(
    node: Node,
    event: str,
    actor: str,
    reason: str = "",
    operation: Operation | None = None,
) -> LifecycleEvent:
    """Apply `event` to `node`, or raise IllegalTransition and change nothing.

    The in-memory `node` is updated to match the row on success.
    """
    if event not in EVENTS:
        raise ValueError(f"unknown lifecycle event {event!r}")
    with transaction.atomic():
        current = Node.objects.filter(pk=node.pk).values_list("state", flat=True).first()
        if current is None:
            raise Node.DoesNotExist(f"node {node.pk} no longer exists")
        target = target_of(current, event)
        if target is None:
            node.state = current
            raise IllegalTransition(node=str(node), state=current, event=event)
        now = timezone.now()
        fields: dict = {
            "state": target,
            "state_changed": now,
            "deadline": deadline_for(target),
            "updated": now,
        }
        if target == S.FAILED:
            fields["failed_step"] = current
            fields["failure_reason"] = reason
        elif current == S.FAILED:
            fields["failed_step"] = ""
            fields["failure_reason"] = ""
        # The WHERE state=current makes a concurrent change lose cleanly instead of racing.
        if not write(Node, node.pk, "state", current, fields):
            raise IllegalTransition(node=str(node), state=current, event=event)
        for key, value in fields.items():
            setattr(node, key, value)
        recorded = LifecycleEvent.objects.create(
            node=node,
            from_state=current,
            to_state=target,
            event=event,
            actor=actor,
            reason=reason,
            operation=operation,
        )
        for hook in HOOKS.values():  # what other apps keep in step, in this transaction
            hook(recorded)
        outbox.emit(
            "node.state_changed",
            lambda: {
                "node": node_data(node),
                "from": current,
                "to": target,
                "event": event,
                "actor": actor,
                "reason": reason,
                "operation": operation.pk if operation is not None else None,
            },
        )
        return recorded
