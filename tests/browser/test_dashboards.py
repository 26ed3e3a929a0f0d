"""The managers' dashboards in a real browser against the production web server: a manager
lands on them after login, Plotly draws every chart from the server's figures, the site
filter swaps the charts in place (and the URL), and nothing is fetched from anywhere but
Corral (plotly.js comes from the plotly package, not a CDN)."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from reports.models import GpuPrice
from tests.factories import CheckResultFactory, GateRunFactory, RackFactory, SiteFactory, user_in
from tests.reports.histories import (
    BACK_TO_SERVICE,
    CHARTS,
    OUT_TO_RMA,
    TO_SERVICE,
    events_at,
    node_at,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
DRAWN = (
    "(id) => { const d = document.getElementById(id); return d && d.data ? d.data.length : -1; }"
)


def wait_drawn(page, chart: str, timeout: float = 10.0) -> None:
    """Until Plotly has drawn the chart's traces. Polled from here with page.evaluate, not
    page.wait_for_function: Playwright evaluates that predicate with eval in the page, which
    the Content Security Policy (no 'unsafe-eval') rightly refuses."""
    deadline = time.monotonic() + timeout
    while page.evaluate(DRAWN, chart) <= 0:
        assert time.monotonic() < deadline, f"{chart} not drawn in {timeout} s"
        page.wait_for_timeout(100)


def seed() -> None:
    """dc1: two H100 nodes, one repaired after a day in RMA (rack a01 reaches revenue);
    dc2: a B200 node still being brought up whose first gate run failed."""
    now = timezone.now()
    day = timedelta(days=1)
    a01 = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="a01")
    b01 = RackFactory(site=SiteFactory(slug="dc2", name="DC two"), name="b01")
    repaired = node_at(now - 5 * day, rack=a01, gpu_count=8)
    events_at(repaired, now - 5 * day, TO_SERVICE)
    events_at(repaired, now - 3 * day, OUT_TO_RMA)
    events_at(repaired, now - 2 * day, BACK_TO_SERVICE)
    steady = node_at(now - 5 * day, rack=a01, gpu_count=8)
    events_at(steady, now - 4 * day, TO_SERVICE)
    fresh = node_at(now - 3 * day, rack=b01, gpu_model="B200", gpu_count=4)
    events_at(fresh, now - day, ["inspect", "inspected"])
    GateRunFactory(node=repaired, status="passed")
    run = GateRunFactory(node=fresh, status="failed")
    CheckResultFactory(run=run, check_name="nccl-allreduce", status="fail")
    GpuPrice.objects.create(gpu_model="H100-SXM", price_per_gpu_hour="2.50", currency="USD")


def test_a_manager_lands_on_drawn_charts_and_filters_them_in_place(
    corral_web, page, shot, settings
):
    seed()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    # Hashed as the production server checks it (the suite's MD5 shortcut is not there).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("manager", "mona")
    page.goto(f"{corral_web}/login/")
    page.fill("#id_username", "mona")
    page.fill("#id_password", "pw-for-tests-123")
    page.click("button[type=submit]")
    # The server checks the password with the production hasher (PBKDF2, CPU-bound by
    # design) and builds the dashboards cold: on two busy cores that outlasts the 5 s
    # default, as the suite's other process runs alongside (make test: -n 2).
    expect(page.locator("h1")).to_have_text("Dashboards", timeout=20_000)
    assert page.url.endswith("/dashboards/")

    for chart in CHARTS:
        wait_drawn(page, chart)
        expect(page.locator(f"#{chart} svg.main-svg").first).to_be_visible()
    expect(page.locator("#kpi-in-service .kpi-value")).to_have_text("16 / 20")
    expect(page.locator("#kpi-racks-waiting .kpi-value")).to_have_text("1")
    racks = page.evaluate("document.getElementById('chart-racks').data.flatMap(t => t.y)")
    assert sorted(racks) == ["dc1/a01", "dc2/b01"]
    shot(page, "dashboards-01-all-sites")

    page.evaluate("window.__stillHere = true")  # survives HTMX swaps, not a page load
    page.select_option("#id_site", "dc2")
    page.wait_for_url("**/dashboards/?*site=dc2*")
    expect(page.locator("#dash-window")).to_contain_text("site dc2")
    wait_drawn(page, "chart-racks")
    racks = page.evaluate("document.getElementById('chart-racks').data.flatMap(t => t.y)")
    assert racks == ["dc2/b01"]
    states = page.evaluate("document.getElementById('chart-gpus-by-state').data.map(t => t.name)")
    assert "In service" not in states and "Enrolled" in states
    expect(page.locator("#kpi-in-service .kpi-value")).to_have_text("0 / 4")
    assert page.evaluate("window.__stillHere") is True
    shot(page, "dashboards-02-site-dc2")

    # Custom range: the date inputs appear, and a date swaps the charts again.
    page.select_option("#id_range", "custom")
    expect(page.locator("#id_from")).to_be_enabled()
    page.fill("#id_from", (timezone.now() - timedelta(days=2)).date().isoformat())
    page.wait_for_url("**/dashboards/?*from=*")
    expect(page.locator("#dash-window")).to_contain_text("site dc2")
    wait_drawn(page, "chart-lost-by-cause")
    assert page.evaluate("window.__stillHere") is True

    # A cause's bar leads to its nodes (Plotly click), with the site kept.
    # Plotly takes clicks on its drag layer over the bars and finds the point itself.
    page.locator("#chart-lost-by-cause g.point path").first.click(force=True)
    expect(page.locator("h1")).to_have_text("Nodes")
    assert "site=dc2" in page.url and "state=enrolled" in page.url
    expect(page.locator("#node-count")).to_have_text("1 node")

    outside = [url for url in requests if not url.startswith(f"{corral_web}/")]
    assert not outside, outside
    assert any(url.endswith("/static/vendor/plotly/plotly.min.js") for url in requests)
