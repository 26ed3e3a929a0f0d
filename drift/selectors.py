"""Reads of the drift app, shared by the API, the pages and the CSV export.

Query counts do not grow with the fleet: a page of the matrix is its nodes, their cells
and the summary's grouped counts, whatever the number of nodes behind the filter.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Q, QuerySet
from django.utils import timezone

from attestation.selectors import UNATTESTED, Standing
from inventory.choices import ACTIVE_OPERATION_STATUSES
from inventory.models import Fact, Node, Operation, Rack, Site
from provisioning.models import Image

from .engine import (
    DRIFT,
    STALE,
    UNKNOWN,
    component_order,
    image_expected,
    merge,
    per_gpu,
    rollup,
    shown_status,
)
from .models import Baseline, BaselineRevision, DriftCell, DriftEvent, NodeDrift
from .services import generation


def stale_before(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(hours=settings.CORRAL_DRIFT_STALE_HOURS)


def nodes() -> QuerySet[Node]:
    """The rows of the matrix (filter them with drift.filtersets.DriftFilterSet)."""
    return Node.objects.select_related("rack__site", "drift_state").order_by("hostname", "pk")


@dataclass
class CellView:
    component: str
    expected: str
    observed: str
    status: str
    observed_at: datetime | None
    source: str
    gpus: list[dict[str, Any]] = field(default_factory=list)

    def as_api(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "expected": self.expected,
            "observed": self.observed,
            "status": self.status,
            "observed_at": self.observed_at.isoformat() if self.observed_at else None,
            "source": self.source,
        }
        if self.gpus:
            data["gpus"] = [
                {**g, "observed_at": g["observed_at"].isoformat() if g["observed_at"] else None}
                for g in self.gpus
            ]
        return data


def _cell_views(cells: list[dict[str, Any]], before: datetime) -> dict[str, CellView]:
    """One view per component; a per-GPU component shows its odd values and the worst
    status of its GPUs, with every GPU under `gpus`."""
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for cell in cells:
        grouped[cell["component"]].append(cell)
    views: dict[str, CellView] = {}
    for component in sorted(grouped, key=component_order):
        items = grouped[component]
        statuses = [shown_status(c["status"], c["observed_at"], before) for c in items]
        if not per_gpu(component) or all(c["gpu"] < 0 for c in items):
            c = items[0]
            views[component] = CellView(
                component, c["expected"], c["observed"], statuses[0], c["observed_at"], c["source"]
            )
            continue
        counts = Counter(c["observed"] for c in items if c["observed"])
        observed = ", ".join(
            v if len(counts) == 1 else f"{v} ×{n}" for v, n in counts.most_common()
        )
        times = [c["observed_at"] for c in items if c["observed_at"]]
        views[component] = CellView(
            component,
            items[0]["expected"],
            observed,
            rollup(statuses),
            min(times) if times else None,
            items[0]["source"],
            gpus=[
                {
                    "gpu": c["gpu"],
                    "observed": c["observed"],
                    "status": s,
                    "observed_at": c["observed_at"],
                }
                for c, s in zip(items, statuses, strict=True)
            ],
        )
    return views


CELL_FIELDS: tuple[str, ...] = ("node_id", "component", "gpu", "expected", "observed", "status")
CELL_FIELDS += ("observed_at", "source")


def cells_for(node_ids: list[int]) -> dict[int, dict[str, CellView]]:
    """Node id -> component -> cell, in one query."""
    rows: dict[int, list[dict[str, Any]]] = defaultdict(list)
    query = DriftCell.objects.filter(node_id__in=node_ids).order_by("node_id", "component", "gpu")
    for cell in query.values(*CELL_FIELDS):
        rows[cell["node_id"]].append(cell)
    before = stale_before()
    return {nid: _cell_views(items, before) for nid, items in rows.items()}


def row(node: Node, cells: dict[str, CellView], trust: Standing = UNATTESTED) -> dict[str, Any]:
    """A matrix row as the API gives it, with the node's attestation standing."""
    rack = node.rack
    state = getattr(node, "drift_state", None)
    return {
        "node": node.pk,
        "hostname": node.hostname,
        "site": rack.site.slug if rack else None,
        "rack": rack.name if rack else None,
        "state": node.state,
        "drifted": state.drifted if state else [],
        "computed_at": state.computed_at.isoformat() if state else None,
        "cells": {name: view.as_api() for name, view in cells.items()},
        "attestation": trust.as_api(),
    }


def summary(node_qs: QuerySet[Node]) -> dict[str, Any]:
    """Fleet (or filtered) totals per component: expected value, drifted and unknown node
    counts, and version -> count (GPUs for per-GPU components, nodes otherwise)."""
    ids = node_qs.order_by().values("pk")
    cells = DriftCell.objects.filter(node_id__in=ids).order_by()
    before = stale_before()
    versions: dict[str, Counter[str]] = defaultdict(Counter)
    expected: dict[str, Counter[str]] = defaultdict(Counter)
    for v in cells.values("component", "expected", "observed").annotate(n=Count("id")):
        expected[v["component"]][v["expected"]] += v["n"]
        if v["observed"]:
            versions[v["component"]][v["observed"]] += v["n"]
    flagged: dict[str, dict[str, int]] = defaultdict(dict)
    # Only the cells that are not plainly OK: drift, unknown, and OK seen too long ago.
    odd = cells.filter(~Q(status="ok") | Q(observed_at__lt=before))
    for c in (
        odd.annotate(stale=ExpressionWrapper(Q(status="ok"), output_field=BooleanField()))
        .values("component", "stale", "status")
        .annotate(n=Count("node_id", distinct=True))
    ):
        key = STALE if c["stale"] else c["status"]
        flagged[c["component"]][key] = flagged[c["component"]].get(key, 0) + c["n"]
    nodes = dict(
        cells.values("component")
        .annotate(n=Count("node_id", distinct=True))
        .values_list("component", "n")
    )
    components = {}
    for name in sorted(expected, key=component_order):
        counts = flagged.get(name, {})
        drifted, unknown = counts.get(DRIFT, 0), counts.get(UNKNOWN, 0)
        components[name] = {
            "nodes": nodes.get(name, 0),
            "compliance_pct": compliance(nodes.get(name, 0), drifted, unknown),
            "expected": expected[name].most_common(1)[0][0],
            "expected_values": dict(expected[name].most_common()),
            "drifted": drifted,
            "unknown": unknown,
            "stale": counts.get(STALE, 0),
            "per_gpu": per_gpu(name),
            "versions": dict(versions[name].most_common()),
        }
    totals = node_qs.order_by().aggregate(
        nodes=Count("pk"), drifted=Count("pk", filter=Q(drift_state__drifted_count__gt=0))
    )
    return {"nodes": totals["nodes"], "drifted_nodes": totals["drifted"], "components": components}


@dataclass
class Column:
    component: str
    expected: str
    drifted: int
    per_gpu: bool
    nodes: int = 0  # the nodes expected to run it
    unknown: int = 0  # of those, how many have no reading of it

    @property
    def compliance_pct(self) -> float | None:
        """The share of the nodes expected to run it that are seen running it."""
        return compliance(self.nodes, self.drifted, self.unknown)


def compliance(nodes: int, drifted: int, unknown: int) -> float | None:
    if not nodes:
        return None
    return round(100 * max(0, nodes - drifted - unknown) / nodes, 1)


def columns(node_qs: QuerySet[Node]) -> list[Column]:
    """The matrix's header, cheaply: components and expected values from the (few)
    baseline x image combinations of the filtered nodes, drifted-node counts from the
    (few) drifted cells. Never reads the OK cells, unlike summary()."""
    ids = node_qs.order_by().values("pk")
    combos = (
        NodeDrift.objects.filter(node_id__in=ids)
        .values("baseline_id", "image")
        .annotate(n=Count("node_id"))
        .order_by("-n")
    )
    wanted = list(combos)
    found = {b.pk: b for b in Baseline.objects.filter(pk__in={c["baseline_id"] for c in wanted})}
    images = {}
    for image in Image.objects.filter(
        name__in={c["image"].split(":", 1)[0] for c in wanted if c["image"]}
    ):
        images[str(image)] = image.baseline
    expected: dict[str, Counter[str]] = defaultdict(Counter)
    for combo in wanted:
        base = found.get(combo["baseline_id"])
        merged = merge(
            image_expected(images.get(combo["image"], {})), base.components if base else {}
        )
        for name, values in merged.items():
            expected[name][" | ".join(values)] += combo["n"]
    flagged: dict[str, Counter[str]] = defaultdict(Counter)
    for name, status, n in (
        DriftCell.objects.filter(node_id__in=ids, status__in=(DRIFT, UNKNOWN))
        .order_by()
        .values("component", "status")
        .annotate(n=Count("node_id", distinct=True))
        .values_list("component", "status", "n")
    ):
        flagged[name][status] = n
    return [
        Column(
            name,
            expected[name].most_common(1)[0][0],
            flagged[name][DRIFT],
            per_gpu(name),
            nodes=sum(expected[name].values()),
            unknown=flagged[name][UNKNOWN],
        )
        for name in sorted(expected, key=component_order)
    ]


def header(node_qs: QuerySet[Node]) -> dict[str, Any]:
    """What the matrix page shows above its rows, in summary()'s shape without the
    version counts (those read every cell; this reads only the drifted ones)."""
    totals = node_qs.order_by().aggregate(
        nodes=Count("pk"), drifted=Count("pk", filter=Q(drift_state__drifted_count__gt=0))
    )
    return {
        "nodes": totals["nodes"],
        "drifted_nodes": totals["drifted"],
        "components": {
            c.component: {
                "expected": c.expected,
                "drifted": c.drifted,
                "per_gpu": c.per_gpu,
                "nodes": c.nodes,
                "compliance_pct": c.compliance_pct,
            }
            for c in columns(node_qs)
        },
    }


def work_under_way(node_ids: list[int]) -> dict[int, tuple[str, int]]:
    """Node -> (what is under way or pending on it, the operation): its newest active
    operation ("apply_firmware: updating BMC to 1.52.00", "converge: running
    apply_firmware"). The matrix shows it beside the node's state, so a drifted cell being
    fixed is not taken for one nobody is fixing."""
    found: dict[int, tuple[str, int]] = {}
    active = (
        Operation.objects.filter(node_id__in=node_ids, status__in=ACTIVE_OPERATION_STATUSES)
        .order_by("node_id", "-created", "-pk")
        .values_list("node_id", "pk", "kind", "status", "message")
    )
    for node_id, pk, kind, status, message in active:
        found.setdefault(node_id, (f"{kind} {status}" + (f": {message}" if message else ""), pk))
    return found


def node_drift(node: Node) -> dict[str, Any]:
    """The node page panel: its cells (per GPU), facts no baseline names, recent history."""
    cells = cells_for([node.pk]).get(node.pk, {})
    named = set(cells)
    extra = [
        f
        for f in Fact.objects.filter(node=node).order_by("key", "gpu")
        if f.key not in named and not f.key.startswith("gpu.")
    ]
    return {
        "cells": cells,
        "drifted": [c for c in cells.values() if c.status == DRIFT],
        "extra": extra,
        "events": list(DriftEvent.objects.filter(node=node)[:50]),
        "state": NodeDrift.objects.filter(node=node).select_related("baseline").first(),
    }


def needing_recompute(limit: int | None = None) -> list[int]:
    """Nodes with no cells yet, computed before the latest baseline change, or edited
    (model, GPU model) since; oldest first."""
    gen = generation()
    query = (
        Node.objects.filter(
            Q(drift_state__isnull=True)
            | Q(drift_state__generation__lt=gen)
            | Q(updated__gt=F("drift_state__computed_at"))
        )
        .order_by(F("drift_state__computed_at").asc(nulls_first=True), "pk")
        .values_list("pk", flat=True)
    )
    return list(query[: limit or settings.CORRAL_DRIFT_SWEEP_BATCH])


def sites() -> QuerySet[Site]:
    """The matrix filter's site choices."""
    return Site.objects.order_by("name")


def racks() -> QuerySet[Rack]:
    return Rack.objects.select_related("site").order_by("site__name", "name")


def baseline_list() -> list[Baseline]:
    """Baselines with `nodes`: how many nodes were last computed against each (two
    queries, whatever the number of baselines)."""
    counts = dict(
        NodeDrift.objects.filter(baseline__isnull=False)
        .order_by()
        .values_list("baseline")
        .annotate(n=Count("pk"))
    )
    items = list(Baseline.objects.order_by("name"))
    for b in items:
        b.nodes = counts.get(b.pk, 0)  # type: ignore[attr-defined]
    return items


def baseline_revisions(baseline: Baseline) -> list[BaselineRevision]:
    return list(baseline.revisions.order_by("-at", "-id"))


def expected_images(node_ids: list[int]) -> Counter[str]:
    """The images the nodes should run (their latest deployment's), most common first."""
    rows = NodeDrift.objects.filter(node_id__in=node_ids).exclude(image="")
    return Counter(rows.values_list("image", flat=True))


def ordered_ids(node_qs: QuerySet[Node]) -> list[int]:
    """The filtered nodes' ids in matrix order (the CSV export reads cells in chunks)."""
    return list(node_qs.values_list("pk", flat=True))


def nodes_in(ids: list[int]) -> dict[int, Node]:
    return {n.pk: n for n in nodes().filter(pk__in=ids)}
