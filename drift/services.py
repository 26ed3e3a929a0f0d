"""Writes of the drift app: cells recomputed from facts and baselines, baselines saved.

`recompute()` is the one writer of DriftCell/NodeDrift/DriftEvent. It runs in the
transaction that stored new facts (via inventory's `facts_recorded` signal) and, for a
baseline change, in tasks over the affected nodes; a per-node advisory lock serialises
two recomputes of the same node so neither writes an event the other already wrote.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from inventory.models import Fact, Node
from inventory.notify import node_data
from provisioning.models import Deployment
from provisioning.models.deployments import DeploymentStatus
from webhooks import outbox

from . import engine
from .engine import DRIFT, Cell, Observation
from .models import Baseline, BaselineRevision, DriftCell, DriftEvent, NodeDrift

LOCK_CLASS = 7311  # pg_advisory_xact_lock(class, node id): one drift writer per node
CHUNK = 500
Key = tuple[str, int]


def generation() -> int:
    """Bumped by every baseline change (the newest revision row's id)."""
    return BaselineRevision.objects.aggregate(g=Max("id"))["g"] or 0


def matching(baselines: list[Baseline], model: str, gpu_model: str) -> Baseline | None:
    """The most specific baseline whose non-blank criteria equal the node's (any case)."""
    best: Baseline | None = None
    for b in baselines:
        if b.node_model and b.node_model.casefold() != model.casefold():
            continue
        if b.gpu_model and b.gpu_model.casefold() != gpu_model.casefold():
            continue
        if best is None or b.specificity > best.specificity:
            best = b
    return best


def _images(node_ids: list[int]) -> dict[int, tuple[str, Any]]:
    """The image each node should be running: its latest deployment's, which a disk node
    keeps installed once deployed; for a stateless node, the one it last booted (phoned
    home with): it runs from RAM, so a deploy that has not booted yet, or failed, changed
    nothing it runs, and a reboot brings back exactly the image it booted
    (docs/boot-modes.md)."""
    stateless = Node.objects.filter(pk__in=node_ids, stateless=True).values("pk")
    disk_latest = (
        Deployment.objects.filter(node_id__in=node_ids)
        .exclude(node_id__in=stateless)
        .values("node_id")
        .annotate(last=Max("id"))
        .values("last")
    )
    booted = (
        Deployment.objects.filter(node_id__in=stateless, status=DeploymentStatus.SUCCEEDED)
        .values("node_id")
        .annotate(last=Max("id"))
        .values("last")
    )
    rows = Deployment.objects.filter(Q(pk__in=disk_latest) | Q(pk__in=booted)).values_list(
        "node_id", "image__name", "image__version", "image__baseline"
    )
    return {nid: (f"{name}:{version}", baseline) for nid, name, version, baseline in rows}


def _facts(node_ids: list[int]) -> dict[int, dict[Key, Observation]]:
    facts: dict[int, dict[Key, Observation]] = defaultdict(dict)
    rows = Fact.objects.filter(node_id__in=node_ids).values_list(
        "node_id", "key", "gpu", "value", "source", "observed_at"
    )
    for nid, key, gpu, value, source, at in rows:
        facts[nid][(key, gpu)] = Observation(value, source, at)
    return facts


def _lock(node_ids: list[int]) -> None:
    if connection.vendor != "postgresql":  # SQLite (a laptop) runs one writer at a time
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, n::int) FROM unnest(%s::bigint[]) n ORDER BY n",
            [LOCK_CLASS, sorted(node_ids)],
        )


def recompute(node_ids: Iterable[int]) -> int:
    """Bring the nodes' cells in line with their facts and baselines; returns how many
    cells changed status. Idempotent: a second run with nothing new writes no event."""
    ids = sorted(set(node_ids))
    changed = 0
    for start in range(0, len(ids), CHUNK):
        changed += _recompute_chunk(ids[start : start + CHUNK])
    return changed


@transaction.atomic
def _recompute_chunk(ids: list[int]) -> int:
    _lock(ids)
    now = timezone.now()
    gen = generation()
    baselines = list(Baseline.objects.all())
    nodes = list(Node.objects.filter(pk__in=ids).select_related("rack__site"))
    images = _images(ids)
    facts = _facts(ids)
    old: dict[int, dict[Key, DriftCell]] = defaultdict(dict)
    for stored in DriftCell.objects.filter(node_id__in=ids):
        old[stored.node_id][(stored.component, stored.gpu)] = stored
    writes: list[DriftCell] = []
    stale_pks: list[int] = []
    events: list[DriftEvent] = []
    states: list[NodeDrift] = []
    for node in nodes:
        image_name, image_baseline = images.get(node.pk, ("", {}))
        baseline = matching(baselines, node.model, node.gpu_model)
        expected = engine.merge(
            engine.image_expected(image_baseline), baseline.components if baseline else {}
        )
        cells = engine.compare(expected, facts.get(node.pk, {}))
        before = old.get(node.pk, {})
        for cell in cells:
            prior = before.pop((cell.component, cell.gpu), None)
            writes.append(_row(node.pk, cell, prior, now))
            events.extend(_events(node.pk, cell, prior, now))
        for gone in before.values():  # no longer expected
            stale_pks.append(gone.pk)
            if gone.status == DRIFT:  # resolved: nothing is expected of it any more
                events.append(_event(node.pk, gone, DriftEvent.Kind.RESOLVED, now, "", ""))
        drifted = sorted({c.component for c in cells if c.status == DRIFT})
        states.append(
            NodeDrift(
                node_id=node.pk,
                drifted=drifted,
                drifted_count=len(drifted),
                baseline=baseline,
                image=image_name,
                generation=gen,
                computed_at=now,
            )
        )
    DriftCell.objects.filter(pk__in=stale_pks).delete()
    DriftCell.objects.bulk_create(
        writes,
        update_conflicts=True,
        unique_fields=["node", "component", "gpu"],
        update_fields=["expected", "observed", "status", "observed_at", "source", "since"],
    )
    NodeDrift.objects.bulk_create(
        states,
        update_conflicts=True,
        unique_fields=["node"],
        update_fields=[
            "drifted",
            "drifted_count",
            "baseline",
            "image",
            "generation",
            "computed_at",
        ],
    )
    DriftEvent.objects.bulk_create(events)
    _notify(events, {n.pk: n for n in nodes})
    return len(events)


def _row(node_id: int, cell: Cell, prior: DriftCell | None, now: datetime) -> DriftCell:
    since = prior.since if prior is not None and prior.status == cell.status else now
    return DriftCell(
        node_id=node_id,
        component=cell.component,
        gpu=cell.gpu,
        expected=cell.expected,
        observed=cell.observed,
        status=cell.status,
        observed_at=cell.observed_at,
        source=cell.source,
        since=since,
    )


def _events(node_id: int, cell: Cell, prior: DriftCell | None, now: datetime) -> list[DriftEvent]:
    was = prior.status == DRIFT if prior is not None else False
    if cell.status == DRIFT and not was:
        return [_event(node_id, cell, DriftEvent.Kind.DETECTED, now, cell.observed)]
    if was and cell.status != DRIFT:
        return [_event(node_id, cell, DriftEvent.Kind.RESOLVED, now, cell.observed)]
    if was and prior is not None and cell.observed != prior.observed:  # another wrong value
        return [_event(node_id, cell, DriftEvent.Kind.DETECTED, now, cell.observed)]
    return []


def _event(
    node_id: int,
    cell: Cell | DriftCell,
    kind: str,
    now: datetime,
    observed: str,
    expected: str | None = None,
) -> DriftEvent:
    return DriftEvent(
        node_id=node_id,
        component=cell.component,
        gpu=cell.gpu,
        kind=kind,
        expected=cell.expected if expected is None else expected,
        observed=observed,
        at=now,
    )


def _notify(events: list[DriftEvent], nodes: dict[int, Node]) -> None:
    """One webhook per node and kind, listing its components (a firmware roll-out that
    drifts eight GPUs is one message, not eight)."""
    grouped: dict[tuple[int, str], list[DriftEvent]] = defaultdict(list)
    for event in events:
        grouped[(event.node_id, event.kind)].append(event)
    for (node_id, kind), items in grouped.items():
        outbox.emit(f"drift.{kind}", _payload(nodes[node_id], items))


def _payload(node: Node, items: list[DriftEvent]) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        return {
            "node": node_data(node),
            "components": [
                {
                    "component": e.component,
                    "gpu": None if e.gpu < 0 else e.gpu,
                    "expected": e.expected,
                    "observed": e.observed,
                }
                for e in items
            ],
        }

    return build


def on_facts(sender: Any, node_ids: list[int], **kwargs: Any) -> None:
    recompute(node_ids)


def expected_for(node: Node) -> dict[str, tuple[str, ...]]:
    """What one node is expected to run (component -> accepted values): its image's
    baseline overlaid with the most specific matching Baseline, as `recompute` reads it."""
    return expected_for_many([node])[node.pk]


def expected_for_many(nodes: list[Node]) -> dict[int, dict[str, tuple[str, ...]]]:
    """expected_for of many nodes in two reads (a campaign's plan over a whole site)."""
    images = _images([n.pk for n in nodes])
    every = list(Baseline.objects.all())
    found = {}
    for node in nodes:
        _name, image_baseline = images.get(node.pk, ("", {}))
        baseline = matching(every, node.model, node.gpu_model)
        found[node.pk] = engine.merge(
            engine.image_expected(image_baseline), baseline.components if baseline else {}
        )
    return found
