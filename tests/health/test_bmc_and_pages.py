"""A BMC gone critical (the refresher's signal), the node page's panel, the overview's
breaker banner."""

from __future__ import annotations

import pytest
from django.urls import reverse

from health import breaker
from health.models import HealthEvent
from inventory.models import Node, Operation
from provisioning.drivers.results import Health, Sensor
from provisioning.signals import bmc_health_changed, health_detail
from tests.factories import OperationFactory
from tests.health.conftest import report

pytestmark = pytest.mark.django_db


def test_a_bmc_turning_critical_is_an_event_and_recycles_the_node(rack5):
    node = rack5[0]
    bmc_health_changed.send(
        sender=Node, node=node, old="ok", new="critical", detail="PSU1: critical"
    )
    event = HealthEvent.objects.get(node=node)
    assert (event.kind, event.source, event.code, event.message) == (
        "bmc",
        "bmc",
        "critical",
        "PSU1: critical",
    )
    op = Operation.objects.get(node=node, kind="recycle")
    assert (op.actor, event.operation_id) == ("policy", op.pk)


def test_a_bmc_that_stays_critical_or_only_warns_is_not_reported_again(rack5):
    node = rack5[0]
    bmc_health_changed.send(sender=Node, node=node, old="critical", new="critical")
    bmc_health_changed.send(sender=Node, node=node, old="ok", new="warning")
    assert not HealthEvent.objects.exists()


def test_health_detail_names_the_sensors_that_are_not_ok():
    health = Health(
        status="critical",
        sensors=[
            Sensor("PSU1", None, None, "critical"),
            Sensor("FAN3", 900.0, "RPM", "warning"),
            Sensor("CPU1 Temp", 40.0, "Cel", "ok"),
        ],
    )
    assert health_detail(health) == "PSU1: critical, FAN3: warning"


def test_the_node_page_loads_the_panel_and_the_panel_shows_the_events(client, users, rack5):
    node = rack5[0]
    event = report(node, 79, gpu="3")
    report(node, 13)
    client.force_login(users["manager"])
    panel_url = reverse("health:node_panel", args=[node.pk])
    page = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    assert f'hx-get="{panel_url}"' in page
    html = client.get(panel_url).content.decode()
    assert 'id="health-events"' in html
    assert 'data-decision="recycle" data-status="started"' in html
    assert 'data-decision="ignore" data-status="recorded"' in html
    assert f"recycle started: operation {event.operation_id}" in html
    assert "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS" in html


def test_the_panel_without_events_and_for_anonymous_visitors(client, users, rack5):
    panel_url = reverse("health:node_panel", args=[rack5[0].pk])
    assert client.get(panel_url).status_code == 302
    client.force_login(users["technician"])
    assert 'id="health-none"' in client.get(panel_url).content.decode()


def test_the_overview_shows_a_banner_while_the_breaker_is_open(client, users):
    client.force_login(users["technician"])
    overview = reverse("fleet:overview")
    assert 'id="health-breaker-open"' not in client.get(overview).content.decode()
    for _ in range(3):
        OperationFactory(kind="recycle", actor="policy", status="failed", finished=None)
    Operation.objects.update(finished=Operation.objects.first().created)
    assert breaker.check() is not None
    html = client.get(overview).content.decode()
    assert 'id="health-breaker-open"' in html and "3 recycles started by the policy" in html
    breaker.close("user:admin")
    assert 'id="health-breaker-open"' not in client.get(overview).content.decode()
