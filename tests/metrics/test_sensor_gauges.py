"""Per-site aggregates of the BMC sensors on /metrics: power against the racks' budgets,
the warmest intake, the hottest GPU, nodes with a GPU over the limit."""

from __future__ import annotations

import pytest

from provisioning import sensors
from provisioning.drivers.results import Sensor
from tests.factories import NodeFactory, RackFactory, SiteFactory

from .scrape import scrape, value

pytestmark = pytest.mark.django_db


def readings(watts: float, intake: float, gpu: float) -> list[Sensor]:
    return [
        Sensor("Total Power", watts, "W", "ok", kind="power", context="Chassis"),
        Sensor("Inlet", intake, "Cel", "ok", kind="temperature", context="Intake"),
        Sensor("GPU 0", gpu, "Cel", "ok", kind="temperature", context="GPU"),
    ]


def test_site_power_temperatures_and_hot_gpus(client, settings):
    settings.CORRAL_GPU_TEMPERATURE_LIMIT_C = 87.0
    dc1 = SiteFactory(slug="dc1")
    rack_a, rack_b = RackFactory(site=dc1, power_budget_kw=40), RackFactory(site=dc1)
    RackFactory(site=dc1, power_budget_kw="12.5")
    sensors.record(NodeFactory(rack=rack_a), readings(10200, 24.0, 71.0))
    sensors.record(NodeFactory(rack=rack_b, state="in_service"), readings(9800, 27.5, 92.0))
    NodeFactory(rack=rack_b)  # no answer yet: counts nothing

    text = scrape(client)

    assert value(text, "corral_site_power_watts", site="dc1") == 20000
    assert value(text, "corral_site_power_budget_watts", site="dc1") == 52500
    assert value(text, "corral_site_intake_temperature_max_celsius", site="dc1") == 27.5
    assert value(text, "corral_site_gpu_temperature_max_celsius", site="dc1") == 92.0
    assert value(text, "corral_nodes_gpu_over_temperature", site="dc1") == 1
