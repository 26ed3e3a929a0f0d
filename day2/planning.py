"""A campaign's plan, before anything starts: which nodes, what changes on each (from →
to), which nodes are left out and why, and about how long it takes at its pacing.

The same plan is what `campaigns.create` starts from, so what a person previewed is
what runs: the skipped nodes become skipped members with the same reason.

The estimate: within a rack, at most `max_unavailable_pct` of its nodes (at least one)
are out at once, so its nodes in service run in that many lanes, longest first; nodes
already out of service cost no room and run at once; racks run side by side. A node
whose kind knows no duration counts as the median of those it knows.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from django.core.exceptions import ValidationError

from inventory.actions import get_action
from inventory.choices import NodeState
from inventory.models import Node
from provisioning.deployments import resolve_image
from provisioning.models import Image
from provisioning.selectors import current_image_subquery

from . import kinds
from .models import CampaignNode, CampaignStatus, MemberStatus

IN_ANOTHER = "already in another campaign"


@dataclass
class Planned:
    node: Node
    skip: str = ""
    changes: list[dict[str, Any]] = field(default_factory=list)
    estimate_s: int | None = None

    def as_api(self) -> dict[str, Any]:
        return {
            "node": self.node.pk,
            "hostname": self.node.hostname,
            "rack": self.node.rack.name if self.node.rack_id else None,
            "state": self.node.state,
            "skipped": bool(self.skip),
            "reason": self.skip,
            "changes": self.changes,
            "estimate_s": self.estimate_s,
        }


@dataclass
class Plan:
    kind: kinds.Kind
    image: Image | None
    members: list[Planned]
    estimate_s: int | None

    def as_api(self) -> dict[str, Any]:
        skipped = [m for m in self.members if m.skip]
        return {
            "kind": self.kind.name,
            "image": str(self.image) if self.image else None,
            "nodes": len(self.members) - len(skipped),
            "skipped": len(skipped),
            "estimate_s": self.estimate_s,
            "members": [m.as_api() for m in self.members],
        }


def plan(kind_name: str, image_ref: Any, nodes: list[Node], max_unavailable_pct: int) -> Plan:
    """The plan of a campaign of `kind_name` over `nodes`; a 400 (ValidationError) naming
    the field when the kind is unknown or its image missing or unknown."""
    kind = kinds.get(kind_name)
    image = None
    if kind.needs_image:
        if image_ref in (None, ""):
            raise ValidationError({"image": f"A {kind.name} campaign needs an image."})
        image = resolve_image(image_ref)
    elif image_ref not in (None, ""):
        raise ValidationError({"image": f"A {kind.name} campaign takes no image."})
    busy = _in_live_campaigns(nodes)
    assessed = kind.assess(nodes, image)
    members = []
    for node in nodes:
        seen = assessed.get(node.pk, kinds.Assessment())
        skip = IN_ANOTHER if node.pk in busy else seen.skip
        members.append(Planned(node, skip, [] if skip else seen.changes, seen.estimate_s))
    return Plan(kind, image, members, estimate(members, max_unavailable_pct))


def _in_live_campaigns(nodes: list[Node]) -> set[int]:
    return set(
        CampaignNode.objects.filter(
            node__in=nodes,
            status__in=[MemberStatus.WAITING, MemberStatus.RUNNING],
            campaign__status__in=[CampaignStatus.RUNNING, CampaignStatus.PAUSED],
        ).values_list("node_id", flat=True)
    )


def estimate(members: list[Planned], max_unavailable_pct: int) -> int | None:
    """Seconds until every planned node ended, at this pacing (the module docstring)."""
    todo = [m for m in members if not m.skip]
    known = [m.estimate_s for m in todo if m.estimate_s is not None]
    if not todo or not known:
        return None
    typical = int(median(known))
    racks = {m.node.rack_id for m in todo if m.node.rack_id is not None}
    sizes = Counter(
        Node.objects.filter(rack_id__in=racks)
        .exclude(state=NodeState.DECOMMISSIONED)
        .values_list("rack_id", flat=True)
    )
    by_rack: dict[int | None, list[int]] = defaultdict(list)
    longest = 0
    for m in todo:
        seconds = m.estimate_s if m.estimate_s is not None else typical
        if m.node.state == NodeState.IN_SERVICE:
            by_rack[m.node.rack_id].append(seconds)
        else:
            longest = max(longest, seconds)  # out of service already: starts at once
    for rack_id, durations in by_rack.items():
        lanes = 1 if rack_id is None else max(1, sizes[rack_id] * max_unavailable_pct // 100)
        longest = max(longest, _makespan(durations, lanes))
    return longest


def _makespan(durations: list[int], lanes: int) -> int:
    """Longest first, each to the lane that frees first."""
    ends = [0] * min(lanes, len(durations))
    for seconds in sorted(durations, reverse=True):
        heapq.heapreplace(ends, ends[0] + seconds)
    return max(ends)


def assess_reimage(nodes: list[Node], image: Image | None) -> dict[int, kinds.Assessment]:
    """A recycle to `image`: left out where a recycle cannot start, and in RMA (a recycle
    there closes the case as repaired: a rollout must not decide that); the change is the
    image each node runs now (its latest successful deployment's) to the campaign's."""
    action = get_action("recycle")
    assert action is not None
    allowed = action.allowed_states - {NodeState.RMA}
    running = dict(
        Node.objects.filter(pk__in=[n.pk for n in nodes])
        .annotate(image_id_now=current_image_subquery())
        .values_list("pk", "image_id_now")
    )
    ids = [i for i in running.values() if i is not None]
    names = {i.pk: str(i) for i in Image.objects.filter(pk__in=ids)}
    found: dict[int, kinds.Assessment] = {}
    for node in nodes:
        if node.state == NodeState.RMA:
            why = "rma: waiting for its repair (closing its case recycles it)"
            found[node.pk] = kinds.Assessment(why)
        elif node.state not in allowed:
            found[node.pk] = kinds.Assessment(f"{node.state}: a recycle cannot start there")
        elif not action.fits(node.role):
            found[node.pk] = kinds.Assessment(f"{node.role}: it boots no image of Corral's")
        else:
            now = running.get(node.pk)
            change = {"component": "image", "from": names.get(now), "to": str(image)}
            found[node.pk] = kinds.Assessment(changes=[change])
    return found
