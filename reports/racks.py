"""Rack to revenue: from a rack's delivery to the first moment `threshold` of its GPUs are
in service at once; the racks not there yet, how long they have waited and what holds them.

A rack's GPUs are those of its nodes not decommissioned. Its start is its recorded
delivery, else its first node's enrolment. Once reached a rack stays reached, so the
moment is remembered (RackReach) and computed again only when the rack's GPUs change.

A rack built to a template (an NVL72, trays.readiness) earns nothing until it is ready as
a whole, so for it the moment is the first time it was ready, whatever the threshold: its
GPUs are one NVLink domain, and a switch tray or power shelf down holds all of them.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Count, Min, Q, Sum
from django.utils import timezone

from inventory.choices import NodeState
from inventory.models import Node, Rack, Site
from trays.models import RackLayout

from . import history, hours
from .models import RackReach, Span

DEC = NodeState.DECOMMISSIONED


def rows(site: Site | None = None, threshold: float = 0.95, gpu_model: str = "") -> list[dict]:
    return hours.remembered(
        ("racks", site, threshold, gpu_model), lambda: _rows(site, threshold, gpu_model)
    )


def _rows(site: Site | None, threshold: float, gpu_model: str) -> list[dict]:
    # A rack's layout (trays.models) comes in the same query: a reverse one-to-one.
    query = Rack.objects.select_related("site", "layout__template").annotate(
        gpus=Sum("nodes__gpu_count", filter=~Q(nodes__state=DEC)),
        first_node=Min("nodes__created"),
    )
    if site is not None:
        query = query.filter(site=site)
    if gpu_model:
        query = query.filter(pk__in=Node.objects.filter(gpu_model=gpu_model).values("rack_id"))
    racks: list[Any] = [r for r in query if r.gpus]
    layouts = {r.pk: r.layout for r in racks if _layout(r) is not None}
    reached = _reached([r for r in racks if r.pk not in layouts], threshold)
    reached.update({rack_id: layout.first_ready for rack_id, layout in layouts.items()})
    holding = _holding([r.pk for r in racks if reached.get(r.pk) is None])
    now = timezone.now()
    out = []
    for rack in racks:
        started = rack.delivered or rack.first_node
        at = reached.get(rack.pk)
        row = {
            "rack": rack.name,
            "rack_id": rack.pk,
            "site": rack.site.slug,
            "gpus": rack.gpus,
            "started": started,
            "reached": at,
            "hours": round(history.hours(started, at), 2) if at else None,
        }
        layout = layouts.get(rack.pk)
        if layout is not None:
            row["template"] = layout.template.name
            row["ready"] = layout.ready
        if at is None:
            row["waiting_hours"] = round(history.hours(started, now), 2)
            row["holding"] = holding.get(rack.pk, {})
            if layout is not None:
                row["waiting_for"] = layout.waiting
        out.append(row)
    out.sort(key=lambda r: (r["started"], r["site"], r["rack"]))
    return out


def _layout(rack: Rack) -> RackLayout | None:
    try:
        return rack.layout
    except RackLayout.DoesNotExist:
        return None


def _reached(racks: list[Any], threshold: float) -> dict[int, datetime | None]:
    """rack id -> when it reached the threshold (None: not yet), from memory where valid."""
    key = Decimal(str(threshold)).quantize(Decimal("0.001"))
    known = {
        r.rack_id: (r.gpus, r.reached)
        for r in RackReach.objects.filter(threshold=key, rack_id__in=[r.pk for r in racks])
    }
    out: dict[int, datetime | None] = {}
    todo = []
    for rack in racks:
        gpus, at = known.get(rack.pk, (None, None))
        if gpus == rack.gpus:
            out[rack.pk] = at
        else:
            todo.append(rack)
    if todo:
        stays: dict[int, list] = defaultdict(list)
        spans = Span.objects.filter(
            state=history.IN_SERVICE, node__rack_id__in=[r.pk for r in todo]
        ).values_list("node__rack_id", "node__gpu_count", "start", "end")
        for rack_id, gpus, start, end in spans.iterator(chunk_size=20_000):
            stays[rack_id].append((gpus, start, end))
        found = []
        for rack in todo:
            at = history.reach_time(stays[rack.pk], history.needed_gpus(rack.gpus, threshold))
            out[rack.pk] = at
            if at is not None:
                found.append(RackReach(rack=rack, threshold=key, gpus=rack.gpus, reached=at))
        if found:
            # A cache, not a record: a lost race writes the same value.
            RackReach.objects.bulk_create(
                found,
                update_conflicts=True,
                unique_fields=["rack", "threshold"],
                update_fields=["gpus", "reached"],
            )
    return out


def _holding(rack_ids: list[int]) -> dict[int, dict[str, int]]:
    """Per rack not yet reached: GPUs by state (what holds it)."""
    out: dict[int, dict[str, int]] = defaultdict(dict)
    counts = (
        Node.objects.filter(rack_id__in=rack_ids)
        .exclude(state=DEC)
        .values("rack_id", "state")
        .annotate(n=Count("id"), g=Sum("gpu_count"))
    )
    for row in counts:
        out[row["rack_id"]][row["state"]] = row["g"]
    return out


def summary(racks: list[dict]) -> dict:
    """Median and p90 hours to revenue per site and per month of delivery, and the racks
    still waiting (longest first)."""

    def stats(group: list[dict]) -> dict:
        done = [r["hours"] for r in group if r["hours"] is not None]
        return {
            "racks": len(group),
            "reached": len(done),
            "median_hours": _round(history.percentile(done, 0.5)),
            "p90_hours": _round(history.percentile(done, 0.9)),
        }

    by_site: dict[str, list] = defaultdict(list)
    by_month: dict[str, list] = defaultdict(list)
    for r in racks:
        by_site[r["site"]].append(r)
        by_month[r["started"].strftime("%Y-%m")].append(r)
    waiting = sorted((r for r in racks if r["reached"] is None), key=lambda r: -r["waiting_hours"])
    return {
        "all": stats(racks),
        "by_site": {k: stats(v) for k, v in sorted(by_site.items())},
        "by_month": {k: stats(v) for k, v in sorted(by_month.items())},
        "waiting": waiting,
    }


def _round(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None
