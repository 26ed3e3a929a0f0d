"""Whether a rack built to a template is ready as a whole, and what it waits for.

An NVL72 is one NVLink domain: its GPUs earn nothing until every compute tray passed its
gates and the trays they depend on work. So a laid-out rack is ready when:

- every slot of its template is filled;
- every compute tray is in service (inspected, imaged, its gates passed, admitted);
- every other tray (NVSwitch trays, power shelves, DPUs) has been inspected, is not
  failed, in RMA or decommissioned, and its BMC last said `ok` or `warning` (a warning is
  a degraded part that still works: one power supply of six lost);
- no tray's BMC answers for another serial than the tray's (provisioning.inspection.
  check_serial): a swapped cable or a wrong address, and nothing that BMC says counts.

It is computed again in the transaction of every lifecycle transition of one of its
trays and on every change of a tray's BMC health, with the layout row locked, so two
trays changing at once cannot leave a stale answer. `first_ready` is kept for ever:
rack-to-revenue (reports.racks) counts from delivery to that moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db import transaction
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from inventory.choices import NodeRole, NodeState
from inventory.models import Node
from webhooks import outbox

from .models import RackLayout, RackTemplate, Slot, Tray

MAX_WAITING = 200  # kept on the layout for reports; an NVL72 has 71 slots
HEALTHY = frozenset({"ok", "warning"})
UNUSABLE = frozenset(
    {
        NodeState.ENROLLED,
        NodeState.INSPECTING,
        NodeState.FAILED,
        NodeState.RMA,
        NodeState.DECOMMISSIONED,
    }
)


@dataclass(frozen=True)
class TrayState:
    """What readiness reads of a tray's node: a few columns, not its facts (a transition
    of a tray reads every tray of its rack, and a node's facts are tens of kB)."""

    hostname: str
    state: str
    bmc_health: str
    mismatch: str | None  # hardware_facts.serial_mismatch

    @classmethod
    def of(cls, node: Node) -> TrayState:
        mismatch = (node.hardware_facts or {}).get("serial_mismatch")
        return cls(node.hostname, node.state, node.bmc_health, mismatch)


def reason(slot: Slot, node: TrayState | None) -> str | None:
    """What this slot waits for, in a few words (None: nothing)."""
    if node is None:
        return "empty"
    state = NodeState(node.state).label.lower()
    mismatch = node.mismatch
    if mismatch:  # its BMC may be another tray's: nothing it says can be trusted
        return mismatch
    if slot.role == NodeRole.COMPUTE:
        return None if node.state == NodeState.IN_SERVICE else state
    if node.state in UNUSABLE:
        return state
    if node.bmc_health not in HEALTHY:
        return f"BMC health {node.bmc_health or 'not read yet'}"
    return None


def why_not(slot: Slot, node: TrayState | None) -> str | None:
    """The same, naming the slot and its tray: `compute-03 (r12-compute-03): validating`."""
    said = reason(slot, node)
    if said is None:
        return None
    return f"{slot.name} ({node.hostname}): {said}" if node else f"{slot.name}: {said}"


def in_rack_order(slots: list[Slot]) -> list[Slot]:
    """Top of the rack first (as a technician reads it standing in front), each device
    inside a tray right after that tray."""
    inside: dict[str, list[Slot]] = {}
    for slot in slots:
        if slot.within:
            inside.setdefault(slot.within, []).append(slot)
    placed = sorted((s for s in slots if not s.within), key=lambda s: (-(s.unit or 0), s.name))
    return [
        each
        for slot in placed
        for each in [slot, *sorted(inside.get(slot.name, []), key=lambda s: s.name)]
    ]


def slots_of(template: RackTemplate) -> tuple[Slot, ...]:
    """A template's slots in rack order, read once per process: a template never changes
    once made (trays.models), and every transition of a tray asks for them. Keyed by its
    creation too: a row id SQLite reuses after a delete is another template."""
    return _slots(template.pk, template.created)


@lru_cache(maxsize=256)
def _slots(template_id: int, created: Any) -> tuple[Slot, ...]:
    return tuple(in_rack_order(list(Slot.objects.filter(template_id=template_id))))


def waiting_for(layout: RackLayout) -> list[str]:
    """Every slot the rack waits for, top of the rack first (empty: ready)."""
    rows = (
        Tray.objects.filter(layout=layout)
        .annotate(mismatch=KeyTextTransform("serial_mismatch", "node__hardware_facts"))
        .values_list("slot_id", "node__hostname", "node__state", "node__bmc_health", "mismatch")
    )
    nodes = {slot: TrayState(*rest) for slot, *rest in rows}
    reasons = (why_not(slot, nodes.get(slot.pk)) for slot in slots_of(layout.template))
    return [reason for reason in reasons if reason]


def refresh(rack_id: int) -> RackLayout | None:
    """Assess the rack again and record it; tell webhooks when it turns ready or stops."""
    with transaction.atomic():
        layouts = RackLayout.objects.select_related("template")
        layout = layouts.select_for_update(of=("self",)).filter(pk=rack_id).first()
        if layout is None:
            return None
        waiting = waiting_for(layout)[:MAX_WAITING]
        ready = not waiting
        changed = ready != layout.ready
        if not changed and waiting == layout.waiting:
            return layout  # most transitions change nothing the rack shows
        now = timezone.now()
        layout.waiting = waiting
        if changed:
            layout.ready = ready
            layout.ready_since = now if ready else None
            if ready and layout.first_ready is None:
                layout.first_ready = now
        layout.save(update_fields=["ready", "ready_since", "first_ready", "waiting"])
        if changed:
            outbox.emit("rack.ready" if ready else "rack.not_ready", lambda: _payload(layout))
    return layout


def _payload(layout: RackLayout) -> dict[str, Any]:
    rack = layout.rack
    return {
        "rack": {"id": rack.pk, "name": rack.name, "site": rack.site.slug},
        "template": layout.template.name,
        "ready": layout.ready,
        "waiting": layout.waiting,
    }


def refresh_for(node_id: int) -> None:
    """Assess the rack of this node again, if it is a tray of one."""
    for layout_id in Tray.objects.filter(node_id=node_id).values_list("layout_id", flat=True):
        refresh(layout_id)


def on_transition(event: Any) -> None:
    """inventory.lifecycle hook: a node changed state (in the transition's transaction)."""
    refresh_for(event.node_id)


def on_bmc_health(sender: Any, node: Node, **kwargs: Any) -> None:
    """provisioning.signals.bmc_health_changed: a node's BMC health changed."""
    refresh_for(node.pk)
