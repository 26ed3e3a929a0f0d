"""Safety limits on automatic actions: how many nodes a rack / site may have out of
service (the site's capacity limits, inventory.capacity), and the per-node cool-down.
Read-only: each returns why an action must wait, or None.

"Out of service" is inventory's one definition (selectors.out_of_service, which campaigns
count by too): a node in a state where it serves no jobs because something is being done
to it or is wrong with it, or one with a recycle under way. Ready, enrolled and
decommissioned nodes are not counted: they were not serving, and recycling one takes
nothing away from the scheduler. A node already out (failed, drained) adds nothing when
it is recycled or sent to RMA, so it is never held for capacity.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from core.text import plural
from inventory import capacity, selectors
from inventory.choices import ACTIVE_OPERATION_STATUSES, NodeState
from inventory.models import Node, Operation

from .choices import HeldFor

POLICY = "policy"  # the actor of everything the policy starts


def active_recycles() -> QuerySet[Operation]:
    return Operation.objects.filter(kind="recycle", status__in=ACTIVE_OPERATION_STATUSES)


out_of_service = selectors.out_of_service


def is_out(node: Node) -> bool:
    return out_of_service(Node.objects.filter(pk=node.pk)).exists()


def _share_hold(
    scope: str, name: str, nodes: QuerySet[Node], percent: float, minimum: int
) -> str | None:
    counted = nodes.exclude(state=NodeState.DECOMMISSIONED)
    total = counted.count()
    out = out_of_service(counted).count()
    limit = capacity.allowed_out(total, percent, minimum)
    if out + 1 <= limit:
        return None
    return (
        f"held: {scope} {name} already has {out} of {plural(total, 'node')} out of service "
        f"(limit {percent:g} %, at least {minimum}: {limit} may be out)"
    )


def capacity_hold(node: Node) -> tuple[str, str] | None:
    """(held_for, outcome) when taking `node` out would pass its rack's or site's limit.
    Call inside the transaction that starts the action, after locking the site row
    (services.record_events does), so two events cannot both take the last free slot."""
    rack = node.rack
    if rack is None or is_out(node):
        return None
    limits = capacity.of(rack.site)
    held = _share_hold(
        "rack",
        rack.name,
        Node.objects.filter(rack_id=rack.pk),
        limits.rack_percent,
        limits.rack_min,
    )
    if held:
        return HeldFor.RACK, held
    held = _share_hold(
        "site",
        rack.site.slug,
        Node.objects.filter(rack__site_id=rack.site_id),
        limits.site_percent,
        limits.site_min,
    )
    return (HeldFor.SITE, held) if held else None


def cooldown_hold(node: Node) -> tuple[str, str] | None:
    """A node the policy acted on a moment ago is left alone for a while: the events its
    own recycle causes (a reset GPU's XIDs, a BMC going critical mid-reboot) must not
    start a second one."""
    minutes = settings.CORRAL_HEALTH_COOLDOWN_MINUTES
    recent = (
        Operation.objects.filter(
            node_id=node.pk,
            actor=POLICY,
            parent__isnull=True,  # the recycle chain's steps carry its actor; not them
            created__gte=timezone.now() - timedelta(minutes=minutes),
        )
        .order_by("-created")
        .first()
    )
    if recent is None:
        return None
    until = recent.created + timedelta(minutes=minutes)
    return HeldFor.COOLDOWN, (
        f"held: cool-down until {until:%Y-%m-%d %H:%M} UTC (operation {recent.pk}, "
        f"{recent.kind}, started by the policy {recent.created:%H:%M} UTC)"
    )
