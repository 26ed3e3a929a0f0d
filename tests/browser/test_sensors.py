"""The node page's sensors in a real browser against the production web server: the
panel loads over HTMX and Plotly draws the history under the Content Security Policy
(plotly.js from Corral, the figure from a JSON block); the rack page shows its draw."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from provisioning import sensors
from provisioning.drivers.results import Sensor
from tests.browser.login import log_in
from tests.factories import NodeFactory, RackFactory, user_in

from .test_dashboards import wait_drawn

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def readings(gpu: float, watts: float) -> list[Sensor]:
    return [
        Sensor("Inlet Temp", 22.0, "Cel", "ok", kind="temperature", context="Intake"),
        Sensor("GPU 5 Temp", gpu, "Cel", "ok", kind="temperature", context="GPU"),
        Sensor("Total Power", watts, "W", "ok", kind="power", context="Chassis"),
    ]


def test_a_technician_sees_the_sensor_history_drawn(corral_web, page, shot, settings):
    rack = RackFactory(power_budget_kw=20)
    node = NodeFactory(rack=rack, hostname="hot01")
    now = timezone.now()
    for minutes, gpu, watts in ((50, 64.0, 9100.0), (30, 70.0, 9800.0), (10, 72.0, 10150.0)):
        sensors.record(node, readings(gpu, watts), at=now - timedelta(minutes=minutes))
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("technician", "tess")
    log_in(page, corral_web, "tess")

    page.goto(f"{corral_web}/nodes/{node.pk}/")
    expect(page.locator("#sensors-power")).to_have_text("10150 W", timeout=20_000)
    expect(page.locator("#sensors-gpu")).to_contain_text("72 °C")
    chart = f"sensors-chart-{node.pk}"
    wait_drawn(page, chart)
    names = page.evaluate(f"document.getElementById('{chart}').data.map(t => t.name)")
    assert names == ["intake °C", "hottest °C", "hottest GPU °C", "power W"]
    points = page.evaluate(f"document.getElementById('{chart}').data[3].y")
    assert points == [9100, 9800, 10150]
    shot(page, "sensors-01-node")

    page.goto(f"{corral_web}/racks/{rack.pk}/")
    expect(page.locator("#rack-power-draw")).to_have_text("Drawing 10.2 kW", timeout=20_000)
    expect(page.locator("#rack-power-share")).to_have_text("51 % of the budget")
