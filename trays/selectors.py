"""Reads: a laid-out rack by slot, for its page panel and the API."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.models import Node

from .models import RackLayout, Slot, Tray
from .readiness import TrayState, reason, slots_of


@dataclass
class SlotRow:
    slot: Slot
    node: Node | None
    waiting: str | None  # what this slot waits for; None: nothing


def slot_rows(layout: RackLayout) -> list[SlotRow]:
    """Every slot of the rack's template in rack order, with its tray and what it waits
    for."""
    nodes = {t.slot_id: t.node for t in Tray.objects.filter(layout=layout).select_related("node")}
    slots = slots_of(layout.template)
    return [SlotRow(slot, nodes.get(slot.pk), _reason(slot, nodes.get(slot.pk))) for slot in slots]


def _reason(slot: Slot, node: Node | None) -> str | None:
    return reason(slot, TrayState.of(node) if node is not None else None)
