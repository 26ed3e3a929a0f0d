"""Reads for the Activity page and the overview's "running now / latest failures": the
fleet's operations and lifecycle events as one timeline, newest first.

Both lists are filtered by the filtersets the API uses (inventory.filtersets), so
`/activity/?site=dc1&status=failed` and `/api/v1/operations/?site=dc1&status=failed` agree.
A page is a fixed number of queries whatever its length: the union of (created, id, what)
is counted and sliced in the database, then the page's rows are read by id, two queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import CharField, Count, Q, QuerySet, Value
from django.utils import timezone

from .actions import ACTIONS
from .choices import ACTIVE_OPERATION_STATUSES, OperationStatus
from .filtersets import LifecycleEventFilterSet, OperationFilterSet
from .import_operations import KIND as IMPORT_KIND
from .models import LifecycleEvent, Operation
from .scope import restrict

SHOW = (("all", "Operations and events"), ("operations", "Operations"), ("events", "Events"))
PAGE_SIZE = 50
OP, EVENT = "op", "event"


@dataclass
class Row:
    """One line of the timeline: an operation or a lifecycle event."""

    what: str
    obj: Any

    @property
    def is_operation(self) -> bool:
        return self.what == OP


def operation_queryset() -> QuerySet[Operation]:
    """Operations with what a row shows: node, rack, site, and a bulk parent's children by
    status (one query for a page, however many children)."""
    counts = {
        f"n_{status}": Count("children", filter=Q(children__status=status))
        for status in OperationStatus.values
    }
    return Operation.objects.select_related("node__rack__site", "rack__site").annotate(
        n_children=Count("children"), **counts
    )


def event_queryset() -> QuerySet[LifecycleEvent]:
    return LifecycleEvent.objects.select_related("node__rack__site")


@dataclass
class Timeline:
    operations: OperationFilterSet
    events: LifecycleEventFilterSet
    show: str

    @property
    def errors(self) -> dict:
        return {**self.operations.errors, **self.events.errors}


def timeline(params: Any, user: Any) -> Timeline:
    """The two filtersets bound to the page's query. The page has one "kind" field: an
    operation's kind or an event's name (`recycle` finds both). Within the user's sites."""
    show = params.get("show") if params.get("show") in dict(SHOW) else "all"
    event_params = params.copy()
    if params.get("kind"):
        event_params["event"] = params["kind"]
    return Timeline(
        OperationFilterSet(params, queryset=restrict(Operation.objects.all(), user)),
        LifecycleEventFilterSet(
            event_params, queryset=restrict(LifecycleEvent.objects.all(), user)
        ),
        show,
    )


def _keys(qs: QuerySet, what: str) -> QuerySet:
    return qs.order_by().values_list("created", "id", Value(what, output_field=CharField()))


def page_of(tl: Timeline, number: Any, per_page: int = PAGE_SIZE) -> tuple[Page, list[Row]]:
    """The page `number` of the timeline, and its rows with their objects."""
    parts = []
    if tl.show in ("all", "operations"):
        parts.append(_keys(tl.operations.qs, OP))
    # Events have no status: a status filter asks for operations.
    tl.operations.is_valid()
    if tl.show in ("all", "events") and not tl.operations.form.cleaned_data.get("status"):
        parts.append(_keys(tl.events.qs, EVENT))
    if not parts:
        keys: Any = Operation.objects.none().values_list("created", "id")
    elif len(parts) == 1:
        keys = parts[0].order_by("-created", "-id")
    else:
        keys = parts[0].union(parts[1], all=True).order_by("-created", "-id")
    page = Paginator(keys, per_page).get_page(number)
    entries = list(page.object_list)
    op_ids = [pk for _, pk, what in entries if what == OP]
    event_ids = [pk for _, pk, what in entries if what == EVENT]
    ops = operation_queryset().in_bulk(op_ids) if op_ids else {}
    events = event_queryset().in_bulk(event_ids) if event_ids else {}
    rows = [
        Row(what, ops[pk] if what == OP else events[pk])
        for _, pk, what in entries
        if pk in (ops if what == OP else events)
    ]
    return page, rows


def duration(op: Operation, now: datetime | None = None) -> timedelta | None:
    """How long it ran (or has been running); None before it started."""
    if op.started is None:
        return None
    return (op.finished or now or timezone.now()) - op.started


def running_now(user: Any, limit: int = 10) -> tuple[list[Operation], int]:
    """Top-level operations pending or running (a bulk parent stands for its children),
    newest first, and how many there are."""
    qs = operation_queryset().filter(status__in=ACTIVE_OPERATION_STATUSES, parent__isnull=True)
    qs = restrict(qs, user)
    return list(qs[:limit]), qs.count()


def latest_failures(limit: int = 10) -> list[Operation]:
    """The last failed operations, children included: a failure is a node's."""
    return list(
        Operation.objects.select_related("node__rack__site", "rack__site")
        .filter(status=OperationStatus.FAILED)
        .order_by("-finished", "-id")[:limit]
    )


def kinds() -> list[str]:
    """Suggestions for the kind field: every action (an operation kind and, for lifecycle
    actions, its event), and its bulk form. From the code, not a DISTINCT over history."""
    names = {IMPORT_KIND}
    for action in ACTIONS.values():
        names |= {action.name, f"bulk_{action.name}"}
        if action.event:
            names.add(action.event)
    return sorted(names)
