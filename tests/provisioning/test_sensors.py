"""A node's telemetry from what its BMC answers: kept at each refresh (the latest, and a
history for the chart), a GPU over its limit sent to the health policy once, the node and
rack panels, and old samples pruned."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from health.models import HealthEvent
from inventory.models import Node, SiteRole
from provisioning import sensors, services
from provisioning.drivers.results import Sensor
from provisioning.models import NodeSensors, SensorSample
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in

pytestmark = pytest.mark.django_db


def gpu(reading: float) -> list[Sensor]:
    return [
        Sensor("Inlet Temp", 23.0, "Cel", "ok", kind="temperature", context="Intake"),
        Sensor("GPU 0 Temp", 61.0, "Cel", "ok", kind="temperature", context="GPU"),
        Sensor("GPU 3 Temp", reading, "Cel", "ok", kind="temperature", context="GPU"),
        Sensor("PSU1 Input Power", 3100.0, "W", "ok", kind="power", context="PowerSupply"),
        Sensor("PSU2 Input Power", 3050.0, "W", "ok", kind="power", context="PowerSupply"),
        Sensor("Fan 1", 9000.0, "RPM", "ok", kind="fan", context="Fan"),
    ]


def test_each_answer_keeps_the_latest_and_a_sample():
    node = NodeFactory()
    sensors.record(node, gpu(70.0))
    sensors.record(node, gpu(72.0))
    latest = NodeSensors.objects.get(node=node)
    # No chassis figure: the power supplies' input, added up.
    assert (latest.power_w, latest.intake_c, latest.hottest_c) == (6150.0, 23.0, 72.0)
    assert latest.gpu_hottest_c == 72.0 and not latest.gpu_over_limit
    assert len(latest.readings) == 6
    assert SensorSample.objects.filter(node=node).count() == 2


def test_a_bmc_without_sensors_records_nothing():
    node = NodeFactory()
    assert sensors.record(node, []) is None
    assert not NodeSensors.objects.filter(node=node).exists()


def test_a_gpu_over_its_limit_is_one_health_event_until_it_cools(settings):
    settings.CORRAL_GPU_TEMPERATURE_LIMIT_C = 87.0
    node = NodeFactory(state="in_service")
    for reading in (80.0, 91.0, 93.0, 85.0, 90.0):
        sensors.record(node, gpu(reading))
    events = list(HealthEvent.objects.filter(node=node).order_by("pk"))
    assert [(e.kind, e.code, e.source) for e in events] == [
        ("thermal", "gpu_over_temperature", "bmc")
    ] * 2  # at 91 (not again at 93), and at 90 after it had cooled to 85
    assert events[0].message == (
        "GPU 3 Temp: 91 °C, over the limit of 87 °C (CORRAL_GPU_TEMPERATURE_LIMIT_C)"
    )
    # The shipped policy (row 290) recycles it: drained first, then the gates judge.
    assert events[0].decision == "recycle"


def test_old_samples_are_pruned(settings):
    settings.CORRAL_SENSOR_HISTORY_HOURS = 24
    node = NodeFactory()
    now = timezone.now()
    sensors.record(node, gpu(60.0), at=now - timedelta(hours=30))
    sensors.record(node, gpu(60.0), at=now - timedelta(hours=1))
    assert sensors.prune(now) == 1
    assert SensorSample.objects.filter(node=node).count() == 1


def test_the_power_refresh_keeps_what_the_bmc_reports(sushy_static):
    node = NodeFactory(gpu_count=0)
    node.bmc.address, node.bmc.system_id = sushy_static.address, "437XR1138R2"
    node.bmc.verify_tls = False
    node.bmc.give_password("pw")
    node.bmc.save()
    services.refresh_power(Node.objects.select_related("bmc", "rack").get(pk=node.pk))
    latest = NodeSensors.objects.get(node=node)
    # public-rackmount1: Sensors/TotalPower 374 W, IntakeTemp 24.8 Cel, DIMMs 44 Cel.
    assert (latest.power_w, latest.intake_c, latest.hottest_c) == (374.0, 24.8, 44.0)


def test_the_node_panel_shows_the_readings_and_their_history(client):
    node = NodeFactory()
    sensors.record(node, gpu(75.0), at=timezone.now() - timedelta(minutes=10))
    sensors.record(node, gpu(76.0))
    client.force_login(user_in("technician"))
    page = client.get(f"/nodes/{node.pk}/sensors-panel/").content.decode()
    assert 'id="sensors-power">6150 W' in page
    assert 'id="sensors-gpu"' in page and "76 °C" in page
    assert "GPU 3 Temp" in page and "PSU1 Input Power" in page
    assert f'data-plotly-for="sensors-chart-{node.pk}"' in page


def test_the_node_panel_of_another_site_is_not_found(client):
    node = NodeFactory(rack=RackFactory(site=SiteFactory(slug="hall-b")))
    user = user_in(None, "hall-a-tech")
    SiteRole.objects.create(user=user, role="technician", site=SiteFactory(slug="hall-a"))
    client.force_login(user)
    assert client.get(f"/nodes/{node.pk}/sensors-panel/").status_code == 404
    assert client.get(f"/racks/{node.rack_id}/power-panel/").status_code == 404


def test_the_rack_panel_shows_its_draw_against_its_budget(client):
    rack = RackFactory(power_budget_kw=10)
    for _ in range(2):
        sensors.record(NodeFactory(rack=rack), gpu(60.0))  # 6,150 W each
    NodeFactory(rack=rack)  # its BMC has not answered yet
    client.force_login(user_in("manager"))
    page = client.get(f"/racks/{rack.pk}/power-panel/").content.decode()
    assert 'id="rack-power-draw">Drawing 12.3 kW' in page
    assert 'id="rack-power-share" class="text-danger fw-semibold">123 % of the budget' in page
    assert "2 of 3 nodes reporting" in page
