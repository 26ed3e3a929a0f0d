"""Reads: a laid-out rack by slot, for its page panel and the API."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.models import Node

from .models import RackLayout, Slot, Tray
from .readiness import in_rack_order, reason


@dataclass
class SlotRow:
    slot: Slot
    node: Node | None
    waiting: str | None  # what this slot waits for; None: nothing


def slot_rows(layout: RackLayout) -> list[SlotRow]:
    """Every slot of the rack's template in rack order, with its tray and what it waits
    for."""
    nodes = {
        t.slot_id: t.node
        for t in Tray.objects.filter(layout=layout).select_related("node", "node__bmc")
    }
    slots = in_rack_order(list(Slot.objects.filter(template_id=layout.template_id)))
    return [SlotRow(slot, nodes.get(slot.pk), reason(slot, nodes.get(slot.pk))) for slot in slots]
