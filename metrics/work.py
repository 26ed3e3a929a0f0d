"""Gauges of the work in flight, read from the database at scrape time (docs/metrics.md):
operations waiting and running, the oldest against its deadline, workers per queue, and
the webhook backlog. The alert rules (deploy/prometheus/) read these."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core.metrics import declare_gauge
from engine.choices import ACTIVE_OPERATION_STATUSES, OperationStatus
from engine.models import Operation, deadline_seconds
from engine.plans import LISTENERS
from engine.workers import live_workers
from inventory.choices import DEFAULT_QUEUE
from inventory.models import Site
from webhooks.models import Delivery
from webhooks.models.events import DeliveryStatus

SPECS = {
    "active": (
        "corral_operations_active",
        "Operations not yet ended, by kind and status (pending, running).",
        ["kind", "status"],
    ),
    "oldest": (
        "corral_operation_oldest_active_age_seconds",
        "Age of the oldest operation of a kind not yet ended, from its acceptance.",
        ["kind"],
    ),
    "late": (
        "corral_operations_past_deadline",
        "Operations not yet ended whose deadline (CORRAL_OPERATION_DEADLINES) has passed: "
        "the sweep fails them, so a value that stays above 0 means the sweep is not running.",
        ["kind"],
    ),
    "pending": (
        "corral_operations_pending",
        "Operations accepted and waiting for a worker, by the queue they were sent to.",
        ["queue"],
    ),
    "unheard": (
        "corral_operations_pending_unheard",
        "Pending operations on a queue no live worker consumes: work that will not start.",
        ["queue"],
    ),
    "workers": (
        "corral_workers_live",
        "Live worker processes (heartbeat within CORRAL_WORKER_STALE_SECONDS) consuming "
        "each queue; every site's queue, the default one and the webhook one are listed, "
        "0 included.",
        ["queue"],
    ),
    "backlog": (
        "corral_webhook_backlog",
        "Webhook deliveries not yet delivered nor given up.",
        [],
    ),
    "lag": (
        "corral_webhook_lag_seconds",
        "Age of the oldest webhook delivery not yet delivered nor given up (0 when none).",
        [],
    ),
}
for _name, _help, _labels in SPECS.values():
    declare_gauge(_name, _help, _labels, app="metrics")


def _family(key: str) -> GaugeMetricFamily:
    name, help, labels = SPECS[key]
    return GaugeMetricFamily(name, help, labels=labels)


def _has_deadline(kind: str) -> bool:
    return not kind.startswith("bulk_") and kind not in LISTENERS


class WorkCollector:
    def collect(self) -> Iterator[Metric]:
        yield from self.operations()
        yield from self.queues()
        yield from self.webhooks()

    def operations(self) -> Iterator[Metric]:
        now = timezone.now()
        active, oldest, late = _family("active"), _family("oldest"), _family("late")
        rows = (
            Operation.objects.filter(status__in=ACTIVE_OPERATION_STATUSES)
            .order_by()
            .values_list("kind", "status")
            .annotate(n=Count("id"), first=Min("created"))
        )
        first_of: dict[str, datetime] = {}
        for kind, status, n, first in rows:
            active.add_metric([kind, status], n)
            first_of[kind] = min(first, first_of.get(kind, first))
        for kind, first in sorted(first_of.items()):
            oldest.add_metric([kind], (now - first).total_seconds())
            if not _has_deadline(kind):
                continue
            cutoff = now - timedelta(seconds=deadline_seconds(kind))
            past = 0
            if first < cutoff:
                past = Operation.objects.filter(
                    kind=kind, status__in=ACTIVE_OPERATION_STATUSES, created__lt=cutoff
                ).count()
            late.add_metric([kind], past)
        yield from (active, oldest, late)

    def queues(self) -> Iterator[Metric]:
        known = [DEFAULT_QUEUE, settings.CORRAL_WEBHOOK_QUEUE]
        queues = {q: 0 for q in known} | {Site.queue_for_slug(s): 0 for s in _site_slugs()}
        workers = dict(queues)
        for worker in live_workers().only("queues"):
            for queue in worker.queue_list:
                workers[queue] = workers.get(queue, 0) + 1
        pending = dict(queues)
        rows = (
            Operation.objects.filter(status=OperationStatus.PENDING)
            .order_by()
            .values_list("node__rack__site__slug", "rack__site__slug")
            .annotate(n=Count("id"))
        )
        for node_site, rack_site, n in rows:
            slug = rack_site or node_site
            queue = Site.queue_for_slug(slug) if slug else DEFAULT_QUEUE
            pending[queue] = pending.get(queue, 0) + n
        live, waiting, unheard = _family("workers"), _family("pending"), _family("unheard")
        for queue in sorted(set(workers) | set(pending)):
            live.add_metric([queue], workers.get(queue, 0))
            waiting.add_metric([queue], pending.get(queue, 0))
            unheard.add_metric([queue], 0 if workers.get(queue) else pending.get(queue, 0))
        yield from (live, waiting, unheard)

    def webhooks(self) -> Iterator[Metric]:
        backlog, lag = _family("backlog"), _family("lag")
        found = Delivery.objects.filter(status=DeliveryStatus.PENDING).aggregate(
            n=Count("id"), first=Min("event__timestamp")
        )
        backlog.add_metric([], found["n"])
        first = found["first"]
        lag.add_metric([], (timezone.now() - first).total_seconds() if first else 0.0)
        yield from (backlog, lag)


def _site_slugs() -> list[str]:
    return list(Site.objects.order_by().values_list("slug", flat=True))
