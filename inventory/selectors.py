"""Reads for views and the API. Every list is built from a fixed number of queries,
whatever the fleet size (tests pin the counts)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from engine import workers
from engine.plans import StepView, kinds_with_steps, steps_of

from .choices import (
    ACTIVE_OPERATION_STATUSES,
    DEFAULT_QUEUE,
    OUT_OF_SERVICE_STATES,
    STATE_COLOURS,
    TRANSITIONAL_STATES,
    NodeState,
    OperationStatus,
)
from .import_operations import KIND as IMPORT_KIND
from .models import LifecycleEvent, Node, Operation, Rack, Site
from .scope import restrict


def node_queryset() -> QuerySet[Node]:
    return Node.objects.select_related("rack__site", "bmc").prefetch_related("labels")


def node_detail_queryset() -> QuerySet[Node]:
    return node_queryset().prefetch_related("interfaces")


def recent_events(node: Node, limit: int = 50) -> list[LifecycleEvent]:
    return list(LifecycleEvent.objects.filter(node=node)[:limit])


def recent_operations(node: Node, limit: int = 10) -> list[Operation]:
    return list(Operation.objects.filter(node=node)[:limit])


def active_operation(node: Node) -> Operation | None:
    return (
        Operation.objects.filter(node=node, status__in=ACTIVE_OPERATION_STATUSES)
        .order_by("-created")
        .first()
    )


def active_plan(
    node: Node,
) -> tuple[Operation, list[tuple[StepView, list[StepView]]]] | None:
    """The flow of several steps running on the node (a recycle; a validate's gate run or a
    deploy on its own), with its steps; a step under way that has steps of its own (the
    recycle's validate: its gate phases) carries them, to be shown within it."""
    ops = list(
        Operation.objects.filter(
            node=node, status__in=ACTIVE_OPERATION_STATUSES, kind__in=kinds_with_steps()
        ).order_by("created", "pk")
    )
    if not ops:
        return None
    outer = ops[0]  # the flow that started first holds the others as its steps
    steps = steps_of(outer)
    if not steps:
        return None
    inner = {op.pk: op for op in ops[1:]}
    shown = []
    for step in steps:
        child = inner.get(step.operation or 0)
        shown.append((step, steps_of(child) if child is not None else []))
    return outer, shown


def latest_rack_operation(rack: Rack) -> Operation | None:
    return Operation.objects.filter(rack=rack, parent__isnull=True).order_by("-created").first()


def import_operations() -> QuerySet[Operation]:
    return Operation.objects.filter(kind=IMPORT_KIND)


def recent_imports(limit: int = 10) -> list[Operation]:
    return list(import_operations().order_by("-created", "-id")[:limit])


def operation_children(op: Operation) -> list[Operation]:
    return list(
        Operation.objects.filter(parent=op).select_related("node").order_by("node__rack_unit")
    )


@dataclass
class StateCounts:
    name: str
    url_query: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def cells(self) -> list[tuple[str, int, str]]:
        return [(s, self.counts.get(s, 0), STATE_COLOURS[s]) for s in NodeState.values]


@dataclass
class SiteOverview(StateCounts):
    racks: list[StateCounts] = field(default_factory=list)


def fleet_overview(user: Any) -> tuple[list[SiteOverview], dict[str, int]]:
    """Node counts by state per site and per rack, of the sites the user reads: three
    queries for any fleet size."""
    sites = {s.pk: SiteOverview(s.name, f"site={s.slug}") for s in restrict(Site.objects, user)}
    racks: dict[int, StateCounts] = {}
    for rack in restrict(Rack.objects.select_related("site"), user).order_by("site__name", "name"):
        racks[rack.pk] = StateCounts(rack.name, f"rack={rack.pk}")
        sites[rack.site_id].racks.append(racks[rack.pk])
    nodes = restrict(Node.objects.all(), user)
    rows = nodes.values("rack_id", "rack__site_id", "state").annotate(n=Count("id"))
    totals: dict[str, int] = defaultdict(int)
    unracked = StateCounts("Unracked", "rack=none")
    for row in rows.order_by():
        totals[row["state"]] += row["n"]
        if row["rack_id"] is None:
            unracked.counts[row["state"]] = unracked.counts.get(row["state"], 0) + row["n"]
            continue
        rack = racks[row["rack_id"]]
        rack.counts[row["state"]] = rack.counts.get(row["state"], 0) + row["n"]
        site = sites[row["rack__site_id"]]
        site.counts[row["state"]] = site.counts.get(row["state"], 0) + row["n"]
    result = list(sites.values())
    if unracked.counts:
        result.append(SiteOverview(unracked.name, unracked.url_query, unracked.counts))
    return result, dict(totals)


@dataclass
class Slot:
    unit: int
    node: Node | None = None
    span: int = 1
    covered: bool = False  # part of a multi-U node drawn at its top unit


def rack_elevation(rack: Rack) -> list[Slot]:
    """U slots top to bottom, the way a technician reads a rack."""
    nodes = Node.objects.filter(rack=rack, rack_unit__isnull=False).only(
        "id",
        "hostname",
        "state",
        "power_state",
        "rack_unit",
        "u_height",
        "gpu_model",
        "gpu_count",
        "rack_id",
    )
    by_unit: dict[int, Slot] = {u: Slot(u) for u in range(1, rack.u_height + 1)}
    for node in nodes:
        top = min(node.top_unit, rack.u_height)
        by_unit[top] = Slot(top, node, span=top - node.rack_unit + 1)
        for u in range(node.rack_unit, top):
            by_unit[u].covered = True
    return [by_unit[u] for u in range(rack.u_height, 0, -1)]


def rack_prefetch() -> Prefetch:
    return Prefetch("racks", queryset=Rack.objects.annotate(node_count=Count("nodes")))


def sites_with_racks(user: Any) -> QuerySet[Site]:
    return restrict(Site.objects.all(), user).prefetch_related(rack_prefetch())


def pending_on(queue: str) -> Q:
    """Operations whose work goes to `queue`, as unserved_queues groups them: by the
    node's site, else the rack's; neither is the default queue."""
    if queue == DEFAULT_QUEUE:
        return Q(node__rack__isnull=True, rack__isnull=True)
    slug = queue.removeprefix(Site.queue_for_slug(""))
    return Q(node__rack__site__slug=slug) | Q(node__rack__isnull=True, rack__site__slug=slug)


def unserved_queues() -> list[tuple[str, int]]:
    """(queue, operations waiting) for every queue with pending work and no live worker:
    the dashboard's "no worker is listening" alert. Two queries, whatever the backlog."""
    waiting: dict[str, int] = defaultdict(int)
    rows = (
        Operation.objects.filter(status=OperationStatus.PENDING)
        .values("node__rack__site__slug", "rack__site__slug")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        slug = row["node__rack__site__slug"] or row["rack__site__slug"]
        waiting[Site.queue_for_slug(slug) if slug else DEFAULT_QUEUE] += row["n"]
    listened = workers.listened_queues()
    return sorted((q, n) for q, n in waiting.items() if q not in listened)


def overdue_nodes(user: Any, limit: int = 10) -> tuple[list[Node], int]:
    """Nodes still in a transitional state past their deadline, oldest first, and how
    many there are: work the watchdog should have ended (is beat running?), shown above
    what is merely in progress."""
    overdue = (
        restrict(Node.objects, user)
        .filter(state__in=TRANSITIONAL_STATES, deadline__lt=timezone.now())
        .select_related("rack__site")
    )
    return list(overdue.order_by("deadline", "pk")[:limit]), overdue.count()


def out_of_service(nodes: QuerySet[Node]) -> QuerySet[Node]:
    """The nodes of `nodes` that are out of service: in an OUT_OF_SERVICE_STATES state, or
    with a recycle under way (one accepted moments ago may not have left service yet). The
    one definition the health limits and the campaigns' room per rack both count by."""
    recycling = Operation.objects.filter(
        kind="recycle", status__in=ACTIVE_OPERATION_STATUSES, node_id=OuterRef("pk")
    )
    return nodes.filter(Q(state__in=OUT_OF_SERVICE_STATES) | Q(Exists(recycling)))
