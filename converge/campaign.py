"""Converge as a campaign kind (day2/kinds.py): what converging each node would change,
read from what Corral already knows (the facts of its last inspection or firmware
re-read, its baseline, the accepted artifacts), never from its BMC, so the plan of a
whole site answers at once. The converge itself reads the BMC again before it acts.

A node is left out, with the reason, when a converge cannot start from its state, when
no accepted artifact fits its model for a component below target (nothing would be
flashed: the converge would fail), or when it is already at its baseline.

Estimates are a guide for the plan, not a promise: `UPDATE_S` per firmware component
(a flash, its task, the restart it needs), `BIOS_S` for BIOS settings (one restart
and the read-back), `SERVICE_S` more for a node in service (drain, gates, admission).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Q

from day2.kinds import Assessment
from drift.services import expected_for_many
from inventory.actions import get_action
from inventory.choices import NodeState
from inventory.facts import NODE_LEVEL
from inventory.models import Fact, Node
from provisioning import bios

from . import pins, targets

UPDATE_S = 600
BIOS_S = 300
SERVICE_S = 900


def assess(nodes: list[Node], image: Any) -> dict[int, Assessment]:
    action = get_action("converge")
    assert action is not None
    expected = expected_for_many(nodes)
    now = _facts([n.pk for n in nodes])
    accepted = targets.accepted_artifacts()
    named = pins.for_nodes(nodes)
    found: dict[int, Assessment] = {}
    for node in nodes:
        if node.state not in action.allowed_states:
            found[node.pk] = Assessment(f"{node.state}: a converge cannot start there")
            continue
        if not action.fits(node.role):
            found[node.pk] = Assessment(f"{node.role}: a converge is for machines that run jobs")
            continue
        changes, why = _changes(
            node, expected[node.pk], now.get(node.pk, {}), accepted, named[node.pk]
        )
        if why:
            found[node.pk] = Assessment(why)
        elif not changes:
            found[node.pk] = Assessment("already at its baseline")
        else:
            found[node.pk] = Assessment(changes=changes, estimate_s=_estimate(node, changes))
    return found


def _changes(
    node: Node,
    expected: dict[str, tuple[str, ...]],
    now: dict[str, str],
    accepted: list[Any],
    named: dict[str, Any],
) -> tuple[list[dict[str, Any]], str]:
    """(the changes, in the order they run; why some component below target cannot be
    updated, "" when every one can)."""
    firmware_wanted = targets.under(targets.FIRMWARE, expected)
    firmware_now = targets.under(targets.FIRMWARE, now)
    changes: list[dict[str, Any]] = []
    todo = targets.firmware_changes(firmware_wanted, firmware_now)
    chosen, why = targets.artifacts_for(node, todo, accepted, named)
    for name, was, _want, artifact in chosen:
        changes.append(
            {
                "component": f"{targets.FIRMWARE}{name}",
                "from": was,
                "to": artifact.version,
                "artifact": artifact.pk,
            }
        )
    bios_wanted = targets.under(bios.PREFIX, expected)
    bios_now = targets.under(bios.PREFIX, now)
    for name in targets.bios_changes(bios_wanted, bios_now, {}):
        changes.append(
            {
                "component": f"{bios.PREFIX}{name}",
                "from": bios_now.get(name),
                "to": bios_wanted[name][0],
            }
        )
    return changes, why


def _estimate(node: Node, changes: list[dict[str, Any]]) -> int:
    flashes = sum(c["component"].startswith(targets.FIRMWARE) for c in changes)
    settings = any(c["component"].startswith(bios.PREFIX) for c in changes)
    in_service = node.state == NodeState.IN_SERVICE
    return flashes * UPDATE_S + (BIOS_S if settings else 0) + (SERVICE_S if in_service else 0)


def _facts(node_ids: list[int]) -> dict[int, dict[str, str]]:
    """Each node's node-level firmware and BIOS facts, in one read."""
    kinds = Q(key__startswith=targets.FIRMWARE) | Q(key__startswith=bios.PREFIX)
    rows = Fact.objects.filter(kinds, node_id__in=node_ids, gpu=NODE_LEVEL)
    found: dict[int, dict[str, str]] = defaultdict(dict)
    for node_id, key, value in rows.values_list("node_id", "key", "value"):
        found[node_id][key] = value
    return found
