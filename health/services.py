"""Writes of the health app: record events and act on the policy's decisions.

`record_events` is the one path every event takes (the API, single or bulk, and the BMC
refresher's signal): each event is classed, decided (health.policy), stored, and a
recycle or RMA decision is handed to health.dispatch, all in one transaction, so a bulk
request is stored whole or not at all and an event never exists without its decision.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from inventory.models import Node, Site
from provisioning.drivers.base import HEALTH_CRITICAL
from webhooks import outbox

from . import dispatch, policy
from .choices import ESCALATIONS, RETRIED, Decision, Kind, Status
from .classify import event_class, normalise_code
from .models import HealthEvent
from .notify import event_data

log = logging.getLogger(__name__)

EMITTED: dict[str, str] = {
    Status.STARTED: "health.action_started",
    Status.HELD: "health.action_held",
}


def _lock_sites(nodes: list[Node]) -> None:
    """Serialise decisions per site: the share of nodes out of service is counted and then
    raised in one transaction, and two of them must not both take the last free slot.
    Rows are locked in id order, so two batches never wait on each other in a circle."""
    site_ids = sorted({n.rack.site_id for n in nodes if n.rack is not None})
    if site_ids:
        list(Site.objects.select_for_update().filter(pk__in=site_ids).order_by("pk"))


def record_events(items: list[dict[str, Any]], reported_by: str) -> list[HealthEvent]:
    """Store and decide `items` (validated: node, source, kind, code, gpu, message, at),
    in the order given: the third of three watched XIDs in one batch escalates."""
    table = policy.rules()
    with transaction.atomic():
        _lock_sites([item["node"] for item in items])
        return [_record(item, table, reported_by) for item in items]


def _record(item: dict[str, Any], table: list, reported_by: str) -> HealthEvent:
    node: Node = item["node"]
    kind = item["kind"]
    code = normalise_code(kind, str(item["code"]))
    klass, name = event_class(kind, code)
    at = item.get("at") or timezone.now()
    verdict = policy.decide(node.pk, kind, code, klass, node.gpu_model, at, table)
    event = HealthEvent.objects.create(
        node=node,
        source=item["source"],
        kind=kind,
        code=code,
        event_class=klass,
        name=name,
        gpu=item.get("gpu") or "",
        message=item.get("message") or "",
        at=at,
        reported_by=reported_by,
        decision=verdict.decision,
        status=Status.RECORDED,
        policy=verdict.rule,
        outcome=_quiet_outcome(verdict, klass),
    )
    if verdict.decision in ESCALATIONS:
        _act(event, node, prefix=verdict.note)
    return event


def _quiet_outcome(verdict: policy.Verdict, klass: str) -> str:
    if verdict.decision == Decision.IGNORE and verdict.rule is not None:
        return f"ignored: class {klass} (policy row {verdict.rule.pk})"
    return verdict.note


def reason_of(event: HealthEvent) -> str:
    """The reason the started operation (and an RMA case) carries: what was seen, where."""
    what = f"{event.kind} {event.code}" + (f" {event.name}" if event.name else "")
    gpu = f" on GPU {event.gpu}" if event.gpu else ""
    return f"health event {event.pk}: {what}{gpu} from {event.source} -> {event.decision}"


def _act(event: HealthEvent, node: Node, prefix: str = "") -> None:
    _apply(event, dispatch.act(node, event.decision, reason_of(event)), prefix)


def _apply(event: HealthEvent, result: dispatch.Result, prefix: str = "") -> None:
    event.status = result.status
    event.held_for = result.held_for
    event.outcome = f"{prefix}; {result.outcome}" if prefix else result.outcome
    event.operation = result.operation
    event.decided = timezone.now()
    event.save(update_fields=["status", "held_for", "outcome", "operation", "decided"])
    if result.status in EMITTED:
        outbox.emit(EMITTED[result.status], lambda: event_data(event))


def reconsider_held() -> int:
    """Beat: try again the events held for capacity (rack or site share) that came within
    CORRAL_HEALTH_RETRY_HELD_MINUTES, oldest first, now that nodes may be back. Events held
    by the breaker or a cool-down are not retried: a technician decides on those
    (docs/health.md). One still held keeps waiting with today's numbers and sends no second
    `health.action_held`. Returns how many started."""
    since = timezone.now() - timedelta(minutes=settings.CORRAL_HEALTH_RETRY_HELD_MINUTES)
    pending = list(
        HealthEvent.objects.filter(status=Status.HELD, held_for__in=RETRIED, received__gte=since)
        .order_by("received", "pk")
        .values_list("pk", flat=True)
    )
    started = 0
    for pk in pending:
        with transaction.atomic():
            event = (
                HealthEvent.objects.select_for_update(of=("self",))
                .filter(pk=pk, status=Status.HELD)
                .select_related("node__rack")
                .first()
            )
            if event is None:
                continue
            _lock_sites([event.node])
            result = dispatch.act(event.node, event.decision, reason_of(event))
            if result.status == Status.HELD:
                HealthEvent.objects.filter(pk=pk).update(
                    held_for=result.held_for, outcome=result.outcome, decided=timezone.now()
                )
                continue
            _apply(event, result, prefix=f"after being {event.outcome}")
            started += result.status == Status.STARTED
    return started


def on_bmc_health(
    sender: Any, node: Node, old: str, new: str, detail: str = "", **kwargs: Any
) -> None:
    """provisioning.signals.bmc_health_changed: a BMC that turns critical is a health
    event like any other (kind bmc, code critical), decided by the same table."""
    if new != HEALTH_CRITICAL or old == HEALTH_CRITICAL:
        return
    message = detail or f"BMC health went from {old or 'unknown'} to {new}"
    _bmc_event(node, Kind.BMC, HEALTH_CRITICAL, message)


def _bmc_event(node: Node, kind: str, code: str, message: str) -> None:
    fresh = Node.objects.select_related("rack").get(pk=node.pk)
    record_events(
        [{"node": fresh, "source": "bmc", "kind": kind, "code": code, "message": message}],
        reported_by="bmc",
    )


GPU_OVER_TEMPERATURE = "gpu_over_temperature"


def on_gpu_too_hot(sender: Any, node: Node, detail: str = "", **kwargs: Any) -> None:
    """provisioning.signals.gpu_too_hot: a GPU the BMC reports over its temperature limit
    is a thermal event, decided by the same table (docs/health.md: row 290 recycles it,
    which drains it first)."""
    _bmc_event(node, Kind.THERMAL, GPU_OVER_TEMPERATURE, detail)
