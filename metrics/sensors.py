"""Per-site aggregates of the BMC sensors (provisioning.sensors), read at scrape time:
what each site draws against its racks' budgets, its hottest intake and GPU, and how many
nodes have a GPU over the limit. Per site, never per node: the node page has those."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Max, Q, Sum
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from core.metrics import declare_gauge
from inventory.models import Rack
from provisioning.models import NodeSensors

from .fleet import NONE

SPECS = {
    "power": ("corral_site_power_watts", "What a site's nodes draw, as their BMCs last said."),
    "budget": (
        "corral_site_power_budget_watts",
        "The sum of a site's racks' power budgets (racks without one count nothing).",
    ),
    "intake": (
        "corral_site_intake_temperature_max_celsius",
        "The warmest intake air any node of a site reports.",
    ),
    "gpu": (
        "corral_site_gpu_temperature_max_celsius",
        "The hottest GPU any node of a site reports.",
    ),
    "hot": (
        "corral_nodes_gpu_over_temperature",
        "Nodes of a site with a GPU over CORRAL_GPU_TEMPERATURE_LIMIT_C.",
    ),
}
for _name, _help in SPECS.values():
    declare_gauge(_name, _help, ["site"], app="metrics")


def _family(key: str) -> GaugeMetricFamily:
    name, help = SPECS[key]
    return GaugeMetricFamily(name, help, labels=["site"])


class SensorCollector:
    def collect(self) -> Iterator[Metric]:
        power, intake, gpu, hot = (_family(k) for k in ("power", "intake", "gpu", "hot"))
        rows = (
            NodeSensors.objects.order_by()
            .values_list("node__rack__site__slug")
            .annotate(
                watts=Sum("power_w"),
                intake=Max("intake_c"),
                gpu=Max("gpu_hottest_c"),
                hot=Count("node", filter=Q(gpu_over_limit=True)),
            )
        )
        for site, watts, warmest, hottest, over in rows:
            labels = [site or NONE]
            if watts is not None:
                power.add_metric(labels, watts)
            if warmest is not None:
                intake.add_metric(labels, warmest)
            if hottest is not None:
                gpu.add_metric(labels, hottest)
            hot.add_metric(labels, over)
        budget = _family("budget")
        budgets = (
            Rack.objects.filter(power_budget_kw__isnull=False)
            .order_by()
            .values_list("site__slug")
            .annotate(kw=Sum("power_budget_kw"))
        )
        for site, kw in budgets:
            budget.add_metric([site], float(kw) * 1000)
        yield from (power, budget, intake, gpu, hot)
