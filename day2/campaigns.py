"""Rolling campaigns: "reimage these nodes to image X" or "converge them to their
baseline", at most N % of a rack out at once, pause if more than M % (or K nodes) fail.

Each node runs its kind's ordinary node action (a recycle, a converge: day2/kinds.py), so
a campaign adds only the plan (day2/planning.py) and the pacing. `tick` is the engine: it
reads how each started node's action ended, pauses the campaign when failures pass the
threshold or the budget, starts waiting nodes where their rack has room, and finishes
the campaign once every node has an outcome. It runs when a member's action ends and on
the day-2 beat, under a row lock on the campaign, so two ticks never
start the same node.

Room in a rack: at most `max_unavailable_pct` of its nodes (always at least one, so a
small rack still moves) may be out of service at once, counting every node of the rack
that is not serving (draining, drained, deploying, validating, inspecting, failed, rma),
whatever took it out; and within its site's capacity limits where the site sets them
(day2/room.py). A member that is not in service when its turn comes (drained, failed,
ready) costs no capacity and starts at once.
"""

from __future__ import annotations

import logging
from collections import Counter

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from core.text import plural
from engine.coalesce import coalesced
from inventory import operations
from inventory import services as inventory
from inventory.choices import FINISHED_OPERATION_STATUSES, NodeState, OperationStatus
from inventory.locking import NodeLocked
from inventory.models import Node, Operation
from webhooks import outbox

from . import campaign_flow, kinds, planning, room
from .models import Campaign, CampaignNode, CampaignStatus, MemberStatus

log = logging.getLogger(__name__)

KIND = "campaign"  # its operation's kind
OP_TO_MEMBER = {
    "succeeded": MemberStatus.SUCCEEDED,
    "failed": MemberStatus.FAILED,
    "cancelled": MemberStatus.CANCELLED,
}


def select_nodes(selection: dict) -> list[Node]:
    """The nodes a selection names: {"nodes": [ids]}, {"rack": id}, {"site": id}, each
    optionally with {"drifted": true} (only nodes the drift matrix shows drifted) or
    {"component": "firmware.BMC"} (only nodes drifted on that component)."""
    nodes = Node.objects.exclude(state=NodeState.DECOMMISSIONED)
    given = [key for key in ("nodes", "rack", "site") if selection.get(key) not in (None, "", [])]
    if len(given) != 1 and not selection.get("drifted"):
        raise ValidationError(
            {
                "selection": "Name the nodes: one of nodes (a list of ids), rack or site (an id); "
                "drifted: true narrows to the drift matrix's drifted nodes."
            }
        )
    if "nodes" in given:
        ids = selection["nodes"]
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise ValidationError({"selection.nodes": "Give a list of node ids."})
        nodes = nodes.filter(pk__in=ids)
        missing = sorted(set(ids) - set(nodes.values_list("pk", flat=True)))
        if missing:
            raise ValidationError({"selection.nodes": f"No such node(s): {missing}."})
    elif "rack" in given:
        nodes = nodes.filter(rack_id=selection["rack"])
    elif "site" in given:
        nodes = nodes.filter(rack__site_id=selection["site"])
    if selection.get("drifted"):
        nodes = nodes.filter(drift_state__drifted_count__gt=0)
    if selection.get("component"):
        # drift's cells, read through their relation (day2 never imports drift)
        nodes = nodes.filter(drift__component=selection["component"], drift__status="drift")
        nodes = nodes.distinct()
    found = list(nodes.select_related("rack__site").order_by("rack__name", "rack_unit", "pk"))
    if not found:
        raise ValidationError({"selection": "The selection names no node."})
    return found


def create(
    *,
    name: str,
    selection: dict,
    actor: str,
    kind: str = "reimage",
    image_ref: int | str | None = None,
    max_unavailable_pct: int = 10,
    pause_failed_pct: int = 20,
    max_failures: int | None = None,
    reason: str = "",
    nodes: list[Node] | None = None,
) -> Campaign:
    """A running campaign over the selected nodes (`nodes`, when the caller has already
    selected them to check its rights on each), started from its plan: the nodes the plan
    leaves out (a recycle cannot start there, no artifact fits, already in another live
    campaign...) are skipped members with the plan's reason."""
    nodes = select_nodes(selection) if nodes is None else nodes
    planned = planning.plan(kind, image_ref, nodes, max_unavailable_pct)
    with transaction.atomic():
        campaign = Campaign(
            name=name,
            kind=planned.kind.name,
            image=planned.image,
            selection=selection,
            actor=actor,
            max_unavailable_pct=max_unavailable_pct,
            pause_failed_pct=pause_failed_pct,
            max_failures=max_failures,
            estimate_s=planned.estimate_s,
            reason=reason,
        )
        campaign.full_clean()
        campaign.save()
        campaign.operation = Operation.objects.create(
            kind=KIND,
            actor=actor,
            status=OperationStatus.RUNNING,
            started=timezone.now(),
            message=f"campaign #{campaign.pk} {name}"[:1000],
            params={
                "campaign": campaign.pk,
                "kind": campaign.kind,
                "image": campaign.image_id,
                "reason": reason,
            },
        )
        campaign.save(update_fields=["operation"])
        CampaignNode.objects.bulk_create(_member(campaign, p) for p in planned.members)
        outbox.emit("campaign.started", lambda: campaign_flow.payload(campaign))
        transaction.on_commit(lambda: tick(campaign.pk))
    return campaign


def _member(campaign: Campaign, planned: planning.Planned) -> CampaignNode:
    return CampaignNode(
        campaign=campaign,
        node=planned.node,
        status=MemberStatus.SKIPPED if planned.skip else MemberStatus.WAITING,
        message=planned.skip,
        changes=planned.changes,
        estimate_s=planned.estimate_s,
    )


def tick(campaign_id: int) -> str:
    """Advance one campaign (see the module docstring); returns its status.

    It runs once per member that ends, so it reads what it acts on, not the campaign:
    the running members, the waiting ones of racks with room, and counts per status (a
    1,000-node campaign read whole on every tick made its CPU grow with the square of
    its size: docs/converge.md, bench-converge)."""
    with transaction.atomic():
        campaign = (
            Campaign.objects.select_for_update(of=("self",))
            .select_related("image")
            .filter(pk=campaign_id)
        ).first()
        if campaign is None:
            return "gone"
        _collect(campaign)
        counts = _counts(campaign)
        if campaign.status == CampaignStatus.RUNNING:
            _maybe_pause(campaign, counts)
        if campaign.status == CampaignStatus.RUNNING and counts[MemberStatus.WAITING]:
            _launch(campaign)
            counts = _counts(campaign)
        active = counts[MemberStatus.WAITING] + counts[MemberStatus.RUNNING] > 0
        _show(campaign, counts)
        if campaign.status == CampaignStatus.CANCELLED:
            CampaignNode.objects.filter(campaign=campaign, status=MemberStatus.WAITING).update(
                status=MemberStatus.CANCELLED, message="campaign cancelled"
            )
        elif not active and campaign.status in (CampaignStatus.RUNNING, CampaignStatus.PAUSED):
            summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()) if n)
            campaign_flow.move(campaign, "finish", "system", summary)
    return campaign.status


def heard(op_id: int) -> None:
    """One of the campaign operation's recycles ended (engine.plans.listen): tick now,
    rather than at the next sweep. Members ending together in one worker make one tick
    after the running one, not one each behind its lock (engine.coalesce)."""
    campaign = Campaign.objects.filter(operation_id=op_id).values_list("pk", flat=True).first()
    if campaign is not None:
        coalesced(("campaign.tick", campaign), lambda: tick(campaign))


def _counts(campaign: Campaign) -> Counter[str]:
    """Members per status, counted by the database."""
    rows = (
        CampaignNode.objects.filter(campaign=campaign)
        .order_by()
        .values_list("status")
        .annotate(n=Count("id"))
    )
    return Counter(dict(rows))


def _show(campaign: Campaign, counts: Counter[str]) -> None:
    """The campaign operation's progress line: how many nodes are done, running, waiting."""
    if campaign.operation_id is None:
        return
    counted = sum(counts.values()) - counts[MemberStatus.SKIPPED]
    ended = counted - counts[MemberStatus.WAITING] - counts[MemberStatus.RUNNING]
    line = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()) if n)
    progress = 100 * ended // counted if counted else 100
    operations.report_progress(Operation(pk=campaign.operation_id), progress, line)


def _collect(campaign: Campaign) -> None:
    """Running members whose action ended take its outcome (only those are read: a
    wave of a hundred running nodes is not read whole each time one of them ends)."""
    ended = CampaignNode.objects.filter(
        campaign=campaign,
        status=MemberStatus.RUNNING,
        operation__status__in=FINISHED_OPERATION_STATUSES,
    )
    for member in ended.select_related("operation"):
        op = member.operation
        assert op is not None  # the filter joined it
        member.status = OP_TO_MEMBER.get(op.status, MemberStatus.FAILED)
        member.message = op.error or str((op.result or {}).get("outcome", ""))
        member.finished = op.finished
        member.save(update_fields=["status", "message", "finished"])


def _maybe_pause(campaign: Campaign, counts: Counter[str]) -> None:
    counted = sum(counts.values()) - counts[MemberStatus.SKIPPED]
    failed = counts[MemberStatus.FAILED]
    if campaign.max_failures is not None and failed >= campaign.max_failures:
        campaign_flow.move(
            campaign,
            "pause",
            "system",
            f"{plural(failed, 'node')} failed: its failure budget is {campaign.max_failures}",
        )
    elif counted and failed * 100 > campaign.pause_failed_pct * counted:
        campaign_flow.move(
            campaign,
            "pause",
            "system",
            f"{failed} of {plural(counted, 'node')} failed "
            f"(more than {campaign.pause_failed_pct} %)",
        )


def _launch(campaign: Campaign) -> None:
    """Start the waiting members that may start: every one not in service (it costs its
    rack nothing), and in-service ones while their rack has room. Only as many members
    as a rack has room for are read; the rest are marked (once) as waiting for room."""
    waiting = CampaignNode.objects.filter(campaign=campaign, status=MemberStatus.WAITING)
    for member in waiting.exclude(node__state=NodeState.IN_SERVICE).select_related("node"):
        _start(campaign, member)
    serving = waiting.filter(node__state=NodeState.IN_SERVICE)
    racks = set(serving.order_by().values_list("node__rack_id", flat=True).distinct())
    space = room.of(campaign, racks)
    for rack_id in racks:
        if rack_id is None:
            in_rack = serving.filter(node__rack__isnull=True)
        else:
            in_rack = serving.filter(node__rack_id=rack_id)
        # A member that cannot start is skipped and gives its slot to the next one.
        while space.left(rack_id) > 0:
            batch = list(in_rack.select_related("node")[: space.left(rack_id)])
            if not batch:
                break
            for member in batch:
                _start(campaign, member)
                if member.status == MemberStatus.RUNNING:
                    space.take(rack_id)
    full: dict[str, Q] = {}
    for rack_id in racks:
        if space.left(rack_id) <= 0:
            here = Q(node__rack__isnull=True) if rack_id is None else Q(node__rack_id=rack_id)
            why = space.why_waiting(rack_id)
            full[why] = full[why] | here if why in full else here
    for why, where in full.items():
        serving.filter(where).exclude(message=why).update(message=why)


def _start(campaign: Campaign, member: CampaignNode) -> None:
    try:
        with transaction.atomic():
            kind = kinds.get(campaign.kind)
            op = inventory.start_action(
                member.node,
                kind.action,
                campaign.actor,
                f"campaign #{campaign.pk} {campaign.name}",
                kinds.params(kind, campaign.image_id),
                parent=campaign.operation,  # it hears the member's action end (`heard`)
            )
    except (inventory.ActionNotAllowed, NodeLocked, ValidationError) as exc:
        member.status, member.message = MemberStatus.SKIPPED, f"not started: {exc}"[:2000]
        member.save(update_fields=["status", "message"])
        return
    member.status, member.operation, member.message = MemberStatus.RUNNING, op, ""
    member.started = timezone.now()
    member.save(update_fields=["status", "operation", "message", "started"])


def pause(campaign: Campaign, actor: str, reason: str = "") -> Campaign:
    return campaign_flow.move(campaign, "pause", actor, reason)


def resume(campaign: Campaign, actor: str, reason: str = "") -> Campaign:
    campaign = campaign_flow.move(campaign, "resume", actor, reason)
    transaction.on_commit(lambda: tick(campaign.pk))
    return campaign


def cancel(campaign: Campaign, actor: str, reason: str = "") -> Campaign:
    """No new node starts; recycles under way run to their end (a reimage cut short would
    leave nodes failed) and are still reported."""
    campaign = campaign_flow.move(campaign, "cancel", actor, reason)
    transaction.on_commit(lambda: tick(campaign.pk))
    return campaign


def cancel_operation(op: Operation, actor: str) -> Operation:
    """POST /api/v1/operations/{id}/cancel/ on a campaign's operation: the campaign is
    cancelled (no waiting node starts; recycles under way run to their end)."""
    campaign = Campaign.objects.filter(operation_id=op.pk).first()
    if campaign is None:
        raise inventory.CannotCancel(f"operation {op.pk} belongs to no campaign")
    try:
        with transaction.atomic():
            cancel(campaign, actor, f"from its operation {op.pk}")
    except campaign_flow.IllegalCampaignTransition as exc:
        raise inventory.CannotCancel(str(exc)) from None
    op.refresh_from_db()
    return op


def sweep() -> int:
    """Beat: tick every campaign that still has nodes to start or to hear from."""
    live = Campaign.objects.filter(
        members__status__in=[MemberStatus.WAITING, MemberStatus.RUNNING]
    ).exclude(status=CampaignStatus.FINISHED)
    ids = sorted(set(live.values_list("pk", flat=True)))
    for pk in ids:
        try:
            tick(pk)
        except Exception:
            log.exception("campaign %s: tick failed", pk)
    return len(ids)
