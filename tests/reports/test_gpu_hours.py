"""GPU-hours through the real lifecycle writer, the rollup and the API."""

import random
from datetime import timedelta

import pytest
import time_machine

from reports import history, services
from reports.models import DayTotal, Episode, RackMonthTotal, RolledDay, Span
from tests.factories import RackFactory
from tests.reports.histories import (
    OUT_TO_RMA,
    T0,
    TO_SERVICE,
    H,
    events_at,
    node_at,
    random_walks,
)

pytestmark = pytest.mark.django_db
URL = "/api/v1/reports/gpu-hours/"


def hand_history(rack):
    """8 GPUs: 10 h in service, then 2 h in RMA (every other step instantaneous)."""
    node = node_at(T0, rack=rack, gpu_count=8)
    events_at(node, T0, TO_SERVICE)
    events_at(node, T0 + 10 * H, OUT_TO_RMA)
    return node


def fetch(client, **params):
    response = client.get(URL, params)
    assert response.status_code == 200, response.content
    return response.json()


def by_state(body):
    return {r["state"]: r["gpu_hours"] for r in body["results"]}


def test_the_writer_keeps_spans_and_episodes_as_the_node_moves(rack):
    node = hand_history(rack)
    spans = list(Span.objects.filter(node=node).order_by("start", "id"))
    lasting = [(s.state, s.start, s.end) for s in spans if s.end is None or s.end > s.start]
    assert lasting == [("in_service", T0, T0 + 10 * H), ("rma", T0 + 10 * H, None)]
    assert Span.objects.filter(node=node, end__isnull=True).count() == 1
    episode = Episode.objects.get(node=node)
    assert (episode.started, episode.ended, episode.reached_rma) == (T0 + 10 * H, None, True)


def test_8_gpus_10_h_in_service_and_2_h_in_rma_are_16_gpu_hours_lost_to_rma(rack, api):
    hand_history(rack)
    with time_machine.travel(T0 + 12 * H, tick=False):
        body = fetch(api("manager"), **{"from": (T0).isoformat(), "to": (T0 + 12 * H).isoformat()})
    assert by_state(body) == {"in_service": 80.0, "rma": 16.0}
    rma = next(r for r in body["results"] if r["state"] == "rma")
    assert rma["cause"] == "rma" and rma["node_hours"] == 2.0


def test_rolled_days_and_live_spans_give_the_same_figures(rack, api):
    hand_history(rack)
    other = node_at(T0 + 5 * H, rack=rack, gpu_count=4)
    events_at(other, T0 + 30 * H, ["inspect", "inspected"])
    window = {"from": "2026-03-02", "to": "2026-03-04"}
    with time_machine.travel(T0 + 80 * H, tick=False):
        client = api("manager")
        live = fetch(client, group_by="day", **window)
        assert services.roll_days() == 3
        assert RolledDay.objects.count() == 3 and DayTotal.objects.exists()
        rolled = fetch(client, group_by="day", **window)
        assert services.roll_days() == 0  # idempotent
    assert rolled == live
    day2 = {r["state"]: r["gpu_hours"] for r in live["results"] if r["group"] == "2026-03-03"}
    # The RMA node all day (8 × 24), the new node enrolled 6 h then inspecting/ready 18 h.
    assert day2 == {"rma": 192.0, "enrolled": 24.0, "ready": 72.0}


def test_a_window_ending_mid_day_reads_the_rolled_days_and_the_rest_live(rack, api):
    hand_history(rack)
    with time_machine.travel(T0 + 60 * H, tick=False):
        services.roll_days()
        body = fetch(api("manager"), **{"from": T0.isoformat(), "to": (T0 + 54 * H).isoformat()})
    assert by_state(body) == {"in_service": 80.0, "rma": 8.0 * 44}


def test_grouped_by_site_rack_and_model(site, rack, api):
    hand_history(rack)
    other_rack = RackFactory(site=site, name="r02")
    node_at(T0, rack=other_rack, gpu_count=4, gpu_model="B200")
    with time_machine.travel(T0 + 12 * H, tick=False):
        client = api("manager")
        racks = fetch(client, group_by="rack", **{"from": T0.isoformat()})
        models = fetch(client, group_by="gpu_model", **{"from": T0.isoformat()})
        sites = fetch(client, group_by="site", **{"from": T0.isoformat()})
    assert {(r["group"], r["state"]): r["gpu_hours"] for r in racks["results"]} == {
        ("DC one/r01", "in_service"): 80.0,
        ("DC one/r01", "rma"): 16.0,
        ("DC one/r02", "enrolled"): 48.0,
    }
    assert {(r["group"], r["state"]) for r in models["results"]} == {
        ("H100-SXM", "in_service"),
        ("H100-SXM", "rma"),
        ("B200", "enrolled"),
    }
    assert {r["group"] for r in sites["results"]} == {"dc1"}
    assert sum(r["gpu_hours"] for r in sites["results"]) == 144.0


def test_conservation_holds_on_random_histories_through_the_writer_and_rollup(rack, api):
    nodes = random_walks(rack, random.Random(7), 12, "rnd", steps=25, gap=500)
    now = T0 + timedelta(days=9)
    a, b = T0 + timedelta(hours=7, minutes=13), T0 + timedelta(days=8, hours=3)
    with time_machine.travel(now, tick=False):
        services.roll_days()
        body = fetch(api("manager"), group_by="day", **{"from": a.isoformat(), "to": b.isoformat()})
    expected = 0.0
    for node in nodes:
        events = list(
            node.events.order_by("created", "id").values_list("created", "from_state", "to_state")
        )
        expected += node.gpu_count * history.existence_hours(
            history.spans(node.created, events), a, b
        )
    assert sum(r["gpu_hours"] for r in body["results"]) == pytest.approx(expected, abs=0.01)


def test_rebuild_gives_back_what_the_writer_kept(rack):
    hand_history(rack)
    before = sorted(Span.objects.values_list("node_id", "state", "start", "end"))
    eps = sorted(Episode.objects.values_list("node_id", "started", "ended", "after_service"))
    with time_machine.travel(T0 + 30 * H, tick=False):
        services.rebuild()
    lasting = [s for s in before if s[3] is None or s[3] > s[2]]
    assert sorted(Span.objects.values_list("node_id", "state", "start", "end")) == lasting
    assert (
        sorted(Episode.objects.values_list("node_id", "started", "ended", "after_service")) == eps
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"from": "2026-03-05", "to": "2026-03-01"}, "from"),
        ({"group_by": "colour"}, "group_by"),
        ({"site": "nowhere"}, "site"),
        ({"rack": "abc"}, "rack"),
        ({"from": "2999-01-01"}, "from"),
    ],
)
def test_bad_parameters_are_400s_naming_the_parameter(api, params, field, db):
    response = api("manager").get(URL, params)
    assert response.status_code == 400, response.content
    assert field in str(response.json())


def test_reports_need_a_role(client, db):
    assert client.get(URL).status_code in (401, 403)


def test_a_bulk_enrolled_node_has_its_first_span(site, rack):
    from inventory import enrolment

    with time_machine.travel(T0, tick=False):
        batch = [enrolment.build(hostname="bulk1", serial="BULK1", rack=rack, gpu_count=8)]
        (node,) = enrolment.write(batch)
    assert list(Span.objects.filter(node=node).values_list("state", "start", "end")) == [
        ("enrolled", T0, None)
    ]


def test_rebuild_reports_command(rack, capsys):
    from django.core.management import call_command

    hand_history(rack)
    call_command("rebuild_reports")
    assert "spans=" in capsys.readouterr().out


def test_the_python_path_sums_what_the_sql_path_sums(rack, api, monkeypatch):
    """The SQLite demo sums spans in Python: same rules, same figures, live and rolled."""
    from reports import hours

    random_walks(rack, random.Random(3), 8, "py", steps=15, gap=400)
    window = {"from": (T0 + 3 * H).isoformat(), "to": (T0 + 70 * H).isoformat()}
    with time_machine.travel(T0 + 100 * H, tick=False):
        client = api("manager")
        sql = {g: fetch(client, group_by=g, **window) for g in ("day", "rack", "state")}
        services.roll_days()
        rolled_sql = sorted(DayTotal.objects.values_list("day", "rack_id", "state", "gpu_hours"))
        monkeypatch.setattr(hours, "use_sql", lambda: False)
        RolledDay.objects.all().delete()
        DayTotal.objects.all().delete()
        python = {g: fetch(client, group_by=g, **window) for g in ("day", "rack", "state")}
        assert services.roll_days() == 4
        rolled_py = sorted(DayTotal.objects.values_list("day", "rack_id", "state", "gpu_hours"))
    for group in sql:
        assert sql[group]["results"] == python[group]["results"]
    assert [r[:3] for r in rolled_sql] == [r[:3] for r in rolled_py]
    assert [r[3] for r in rolled_sql] == pytest.approx([r[3] for r in rolled_py])


def test_per_rack_sums_over_whole_months_match_the_days_and_the_spans(site, rack, api):
    """A long window grouped by rack reads whole rolled months from RackMonthTotal, the other
    rolled days from DayTotal and the rest from the spans: the same figures as live."""
    hand_history(rack)  # 8 GPUs in RMA from T0 + 10 h on
    other = node_at(T0 + 40 * 24 * H, rack=RackFactory(site=site, name="r02"), gpu_count=4)
    events_at(other, T0 + 50 * 24 * H, ["inspect", "inspected"])
    window = {"from": (T0 + 5 * H).isoformat(), "to": (T0 + 65 * 24 * H).isoformat()}
    with time_machine.travel(T0 + 70 * 24 * H, tick=False):
        client = api("manager")
        live = fetch(client, group_by="rack", **window)
        services.roll_days()
        assert RackMonthTotal.objects.filter(month="2026-04-01").exists()
        rolled = fetch(client, group_by="rack", **window)
    assert rolled == live
    got = {(r["group"], r["state"]): r["gpu_hours"] for r in rolled["results"]}
    assert got[("DC one/r01", "rma")] == pytest.approx(8 * (65 * 24 - 10))
    assert got[("DC one/r02", "ready")] == pytest.approx(4 * 15 * 24)


def test_a_date_only_to_includes_that_day(rack, api):
    hand_history(rack)
    with time_machine.travel(T0 + 30 * H, tick=False):
        body = fetch(api("manager"), **{"from": "2026-03-02", "to": "2026-03-02"})
    assert body["to"].startswith("2026-03-03T00:00")
    assert by_state(body) == {"in_service": 80.0, "rma": 8.0 * 14}


def test_days_before_any_history_and_days_not_rolled_cost_no_query_each(rack, api):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    hand_history(rack)
    with time_machine.travel(T0 + 10 * 24 * H, tick=False):
        client = api("manager")
        with CaptureQueriesContext(connection) as year:
            fetch(client, range="365d")
        with CaptureQueriesContext(connection) as week:
            fetch(client, range="7d")
    assert len(year) == len(week)
