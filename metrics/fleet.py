"""Gauges of what the fleet is, read from the database at scrape time (docs/metrics.md).

Each is one aggregate query over indexed columns, so a scrape costs the same at 100 nodes
as at 12,500 (make bench-metrics), and each label comes from a small set: sites, states,
GPU models, drift components, case statuses. No node, MAC or address is ever a label.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Sum
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core.metrics import declare_gauge
from drift.models import CellStatus, DriftCell
from inventory.choices import NodeState
from inventory.models import Node
from rma.choices import OPEN_STATUSES
from rma.models import Case

NONE = "none"  # a node with no rack (so no site), or no GPU model recorded


NODES = (
    "corral_nodes",
    "Nodes by site, lifecycle state and GPU model.",
    ["site", "state", "gpu_model"],
)
GPUS = (
    "corral_gpus",
    "GPUs (the nodes' enrolled GPU counts) by site, lifecycle state and GPU model.",
    ["site", "state", "gpu_model"],
)
SELLABLE = (
    "corral_sellable_gpus",
    "GPUs of nodes in service (sellable capacity), by site and GPU model.",
    ["site", "gpu_model"],
)
DRIFTED = (
    "corral_drifted_nodes",
    "Nodes whose observed value of a component differs from their baseline, by component "
    "(driver, bmc, bios.<Attribute>, ...).",
    ["component"],
)
RMA_OPEN = ("corral_rma_cases_open", "RMA cases not closed, by status.", ["status"])
RMA_OVERDUE = (
    "corral_rma_cases_overdue",
    "RMA cases not closed whose SLA due time has passed.",
    [],
)
for _name, _help, _labels in (NODES, GPUS, SELLABLE, DRIFTED, RMA_OPEN, RMA_OVERDUE):
    declare_gauge(_name, _help, _labels, app="metrics")


def _family(spec: tuple[str, str, list[str]]) -> GaugeMetricFamily:
    name, help, labels = spec
    return GaugeMetricFamily(name, help, labels=labels)


class FleetCollector:
    """Nodes and GPUs, sellable capacity, drift and RMA cases."""

    def collect(self) -> Iterator[Metric]:
        yield from self.nodes()
        yield self.drift()
        yield from self.rma()

    def nodes(self) -> Iterator[Metric]:
        nodes, gpus, sellable = _family(NODES), _family(GPUS), _family(SELLABLE)
        rows = (
            Node.objects.order_by()
            .values_list("rack__site__slug", "state", "gpu_model")
            .annotate(n=Count("id"), g=Sum("gpu_count"))
        )
        for site, state, model, n, g in rows:
            labels = [site or NONE, state, model or NONE]
            nodes.add_metric(labels, n)
            gpus.add_metric(labels, g or 0)
            if state == NodeState.IN_SERVICE:
                sellable.add_metric([site or NONE, model or NONE], g or 0)
        yield from (nodes, gpus, sellable)

    def drift(self) -> Metric:
        family = _family(DRIFTED)
        rows = (
            DriftCell.objects.filter(status=CellStatus.DRIFT)
            .order_by()
            .values_list("component")
            .annotate(n=Count("node", distinct=True))
        )
        for component, n in rows:
            family.add_metric([component], n)
        return family

    def rma(self) -> Iterator[Metric]:
        open_, overdue = _family(RMA_OPEN), _family(RMA_OVERDUE)
        counts = dict(
            Case.objects.filter(status__in=OPEN_STATUSES)
            .order_by()
            .values_list("status")
            .annotate(n=Count("id"))
        )
        for status in sorted(OPEN_STATUSES):
            open_.add_metric([status], counts.get(status, 0))
        late = Case.objects.filter(status__in=OPEN_STATUSES, sla_due__lt=timezone.now()).count()
        overdue.add_metric([], late)
        yield from (open_, overdue)
