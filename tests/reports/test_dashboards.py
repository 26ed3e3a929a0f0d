"""The managers' dashboards (/dashboards/): who may see them, what each chart is built
from, the HTMX partial, the CSVs, errors shown inline, the landing after login, and a
query count that does not grow with the fleet."""

import csv
import io
import re

import pytest
import time_machine
from django.urls import reverse

from reports import dashboards
from reports.models import GpuPrice
from tests.factories import CheckResultFactory, GateRunFactory, RackFactory, SiteFactory
from tests.reports.histories import (
    BACK_TO_SERVICE,
    CHARTS,
    OUT_TO_RMA,
    T0,
    TO_SERVICE,
    H,
    events_at,
    node_at,
)

pytestmark = pytest.mark.django_db
URL = reverse("reports:dashboards")
NOW = T0 + 48 * H
WINDOW = {"range": "custom", "from": "2026-03-02", "to": "2026-03-04"}
CSVS = ["gpus-by-state", "racks", "lost-by-cause", "yield", "repairs"]


def fleet(rack, extra_nodes: int = 0):
    """dc1: an 8-GPU node in service 10 h, in RMA 10 h (a repair), in service again; its
    first gate run passed. dc2: a 4-GPU node delivered 5 h later, inspected at 30 h, its
    first gate run failed a check. `extra_nodes` more in service on dc1's rack."""
    repaired = node_at(T0, rack=rack, gpu_count=8)
    events_at(repaired, T0, TO_SERVICE)
    events_at(repaired, T0 + 10 * H, OUT_TO_RMA)
    events_at(repaired, T0 + 20 * H, BACK_TO_SERVICE)
    other = node_at(T0 + 5 * H, rack=RackFactory(site=SiteFactory(slug="dc2"), name="b01"))
    other.gpu_model, other.gpu_count = "B200", 4
    other.save(update_fields=["gpu_model", "gpu_count"])
    events_at(other, T0 + 30 * H, ["inspect", "inspected"])
    with time_machine.travel(T0 + H, tick=False):
        GateRunFactory(node=repaired, status="passed")
    with time_machine.travel(T0 + 31 * H, tick=False):
        run = GateRunFactory(node=other, status="failed")
        CheckResultFactory(run=run, check_name="nccl-allreduce", status="fail")
    for _ in range(extra_nodes):
        events_at(node_at(T0, rack=rack, gpu_count=8), T0 + 2 * H, TO_SERVICE)
    GpuPrice.objects.create(gpu_model="H100-SXM", price_per_gpu_hour="2.50", currency="USD")
    return repaired, other


@pytest.fixture
def manager(client, users):
    client.force_login(users["manager"])
    return client


def get(client, params=None, **headers):
    with time_machine.travel(NOW, tick=False):
        return client.get(URL, params or {}, headers=headers)


@pytest.mark.parametrize("role", ["manager", "technician", "integration", "admin"])
def test_every_role_sees_the_page_with_each_charts_div(client, users, rack, role):
    fleet(rack)
    with time_machine.travel(NOW, tick=False):
        client.force_login(users[role])
        html = client.get(URL, WINDOW).content.decode()
    for div in CHARTS:
        assert f'id="{div}"' in html, div
    # Plotly is served by Corral itself: no script or stylesheet comes from elsewhere.
    # (Not `"cdn" not in html`: the page's random CSRF token once held those letters.)
    sources = re.findall(r'<(?:script|link)\b[^>]*?(?:src|href)="([^"]*)"', html)
    assert any(src.endswith("vendor/plotly/plotly.min.js") for src in sources), sources
    assert [src for src in sources if "//" in src or "cdn" in src.lower()] == []
    assert 'id="nav-dashboards"' in html
    # The tiles: 8 of 12 GPUs in service; 2 h of the week lost on dc2's B200 (unpriced)
    # and none on the H100 since it came back.
    assert "8 / 12" in html
    assert "USD" in html


def test_the_charts_are_built_from_the_selectors(manager, rack):
    fleet(rack)
    html = get(manager, WINDOW).content.decode()
    # Pareto: lost causes with links to their nodes, keeping the site / model filters.
    assert 'href="/nodes/?state=rma" data-cause="rma"' in html
    assert 'href="/nodes/?state=enrolled&amp;state=inspecting&amp;state=ready"' in html
    assert "nccl-allreduce" in html  # the failing checks table
    assert 'id="mtbf-table"' in html
    html = get(manager, {**WINDOW, "site": "dc1", "gpu_model": "H100-SXM"}).content.decode()
    assert 'href="/nodes/?state=rma&amp;site=dc1&amp;gpu_model=H100-SXM"' in html
    assert "nccl-allreduce" not in html


def test_average_gpus_divides_a_partial_day_by_its_covered_hours(manager, rack):
    fleet(rack)
    with time_machine.travel(NOW, tick=False):
        response = manager.get(
            reverse("reports:chart_csv", args=["gpus-by-state"]),
            {"from": T0.isoformat(), "to": (T0 + 30 * H).isoformat()},
        )
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    day2 = {r["state"]: r for r in rows if r["day"] == "2026-03-03"}
    # 6 h of 2026-03-03 covered: the H100 in service all of it, the B200 enrolled.
    assert day2["in_service"]["hours_covered"] == "6.0"
    assert day2["in_service"]["average_gpus"] == "8.0"
    assert day2["enrolled"]["average_gpus"] == "4.0"
    day1 = {r["state"]: float(r["average_gpus"]) for r in rows if r["day"] == "2026-03-02"}
    # All of 2026-03-02: the H100 in service 14 h and in RMA 10 h, the B200 enrolled 19 h.
    expected = {"in_service": 14 * 8 / 24, "rma": 80 / 24, "enrolled": 76 / 24}
    assert day1 == pytest.approx(expected, abs=1e-3)


def test_a_filter_change_returns_only_the_partial(manager, rack):
    fleet(rack)
    full = get(manager, WINDOW).content.decode()
    part = get(manager, {**WINDOW, "site": "dc2"}, HX_Request="true").content.decode()
    assert 'id="dash-filter"' in full and 'id="dash-filter"' not in part
    assert part.lstrip().startswith('<div id="dash-body"') and "<html" not in part
    assert 'id="chart-gpus-by-state"' in part
    assert "site dc2" in part


@pytest.mark.parametrize("chart", CSVS)
def test_each_csv_has_its_header_and_rows(manager, rack, chart):
    fleet(rack)
    with time_machine.travel(NOW, tick=False):
        response = manager.get(reverse("reports:chart_csv", args=[chart]), WINDOW)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    assert f'filename="{chart}.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, body = rows[0], rows[1:]
    assert header[0] and body, rows
    assert any(u in " ".join(header) for u in ("hours", "percent", "gpus")), header


def test_csvs_carry_units_and_the_figures(manager, rack):
    fleet(rack)
    with time_machine.travel(NOW, tick=False):
        lost = manager.get(reverse("reports:chart_csv", args=["lost-by-cause"]), WINDOW)
        repairs = manager.get(reverse("reports:chart_csv", args=["repairs"]), WINDOW)
        unknown = manager.get("/dashboards/nothing.csv", WINDOW)
        bad = manager.get(reverse("reports:chart_csv", args=["racks"]), {"from": "soon"})
    rows = list(csv.DictReader(io.StringIO(lost.content.decode())))
    rma = next(r for r in rows if r["cause"] == "rma")
    assert rma["gpu_hours"] == "80.0" and rma["cost_usd"] == "200.0"
    assert repairs.content.decode().splitlines() == ["repair,repair_hours", "1,10.0"]
    assert unknown.status_code == 404
    assert bad.status_code == 400 and b"from:" in bad.content


def test_csvs_quote_what_a_spreadsheet_would_run(manager, site):
    """Rack names and GPU models are typed by people: a cell that could start a formula is
    written behind a quote (core.csvsafe); the figures stay numbers."""
    _, other = fleet(RackFactory(site=site, name='=HYPERLINK("http://x","y")'))
    other.gpu_model = "@SUM(1)"
    other.save(update_fields=["gpu_model"])
    with time_machine.travel(NOW, tick=False):
        racks = manager.get(reverse("reports:chart_csv", args=["racks"]), WINDOW)
        yields = manager.get(reverse("reports:chart_csv", args=["yield"]), WINDOW)
    rows = {r["site"]: r for r in csv.DictReader(io.StringIO(racks.content.decode()))}
    assert rows["dc1"]["rack"] == '\'=HYPERLINK("http://x","y")'
    assert rows["dc1"]["gpus"] == "8" and rows["dc2"]["rack"] == "b01"
    rows = {r["passed"]: r for r in csv.DictReader(io.StringIO(yields.content.decode()))}
    assert rows["0"]["gpu_model"] == "'@SUM(1)" and rows["0"]["yield_percent"] == "0.0"


def test_a_bad_from_shows_the_error_inline(manager, rack):
    fleet(rack)
    for headers in ({}, {"HX_Request": "true"}):
        response = get(manager, {"range": "custom", "from": "last tuesday"}, **headers)
        assert response.status_code == 200
        html = response.content.decode()
        assert 'id="dash-errors"' in html and "Use an ISO date" in html
        assert 'id="chart-racks"' not in html
    html = get(
        manager, {"range": "custom", "from": "2026-03-05", "to": "2026-03-01"}
    ).content.decode()
    assert "`from` must be before `to`." in html
    html = get(manager, {"site": "nowhere"}).content.decode()
    assert "No site with slug or name" in html


def test_an_empty_fleet_says_there_is_no_history_yet(manager):
    html = get(manager).content.decode()
    for chart in CSVS:
        assert f'id="empty-{chart}"' in html, chart
    assert "No history yet" in html and "no GPUs yet" in html


def test_anonymous_is_sent_to_login(client):
    for url in (URL, reverse("reports:chart_csv", args=["racks"])):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.parametrize(
    ("role", "lands"), [("manager", URL), ("technician", reverse("fleet:overview"))]
)
def test_login_lands_managers_on_the_dashboards(client, users, role, lands):
    response = client.post(
        reverse("login"), {"username": users[role].username, "password": "pw-for-tests-123"}
    )
    assert response.status_code == 302
    assert client.get(response.url).url == lands


@pytest.mark.parametrize("extra", [0, 25])
def test_the_page_costs_the_same_queries_at_any_fleet_size(
    manager, rack, extra, django_assert_max_num_queries
):
    """30 queries at 2 nodes and at 27, for 3 days and for a year: the page sums each
    window once (hours.memo) and days before any history or not rolled yet cost no query
    each."""
    fleet(rack, extra_nodes=extra)
    get(manager, WINDOW)  # warm: session, content types
    with django_assert_max_num_queries(30):
        get(manager, WINDOW)
    with django_assert_max_num_queries(28):  # the partial: no site / model choices
        get(manager, WINDOW, HX_Request="true")
    with django_assert_max_num_queries(30):
        get(manager, {"range": "365d"})


def test_pareto_sorts_causes_and_accumulates_their_share():
    revenue = {
        "by_gpu_model": [
            {"lost_gpu_hours_by_cause": {"rma": 30.0, "awaiting": 10.0}},
            {"lost_gpu_hours_by_cause": {"awaiting": 50.0, "failed": 10.0}},
        ],
        "totals": {"USD": {"lost_by_cause": {"rma": 75.0, "awaiting": 25.0}}},
    }
    rows = dashboards.pareto(revenue)
    assert [(r["cause"], r["gpu_hours"], r["cumulative_share"]) for r in rows] == [
        ("awaiting", 60.0, 0.6),
        ("rma", 30.0, 0.9),
        ("failed", 10.0, 1.0),
    ]
    assert rows[1]["cost"] == {"USD": 75.0} and rows[2]["cost"] == {}
    assert rows[0]["states"] == ["enrolled", "inspecting", "ready"]


def test_the_timeline_keeps_the_newest_racks_and_draws_waiting_ones_to_now():
    rows = [
        {"rack": f"r{i}", "site": "dc1", "started": T0 + i * H, "reached": None, "hours": None}
        for i in range(70)
    ]
    rows[0]["reached"] = T0 + H
    with time_machine.travel(NOW, tick=False):
        shown = dashboards.rack_timeline(rows, limit=60)
    assert [r["rack"] for r in shown] == [f"r{i}" for i in range(10, 70)]
    assert {r["until"] for r in shown} == {NOW}
    assert dashboards.rack_timeline(rows[:1])[0]["until"] == T0 + H
