"""Rack to revenue, yield, reliability and revenue, on hand-computed histories."""

from datetime import timedelta

import pytest
import time_machine

from reports.models import GpuPrice, RackReach
from rma.models import Case
from tests.factories import CheckResultFactory, GateRunFactory, RackFactory
from tests.reports.histories import OUT_TO_RMA, T0, TO_SERVICE, H, events_at, node_at

pytestmark = pytest.mark.django_db
DAY = timedelta(days=1)


def get(client, url, **params):
    response = client.get(url, params)
    assert response.status_code == 200, response.content
    return response.json()


def bring_up(rack, n=20, first=12, first_day=1, rest_day=3):
    """A rack of n 8-GPU nodes delivered at T0; `first` in service on day 1, the rest on
    day 3 (or never) except one failed."""
    nodes = [
        node_at(T0, rack=rack, gpu_count=8, hostname=f"b{i}", serial=f"B{i}") for i in range(n)
    ]
    for i, node in enumerate(nodes):
        if i < first:
            events_at(node, T0 + first_day * DAY, TO_SERVICE)
        elif i < n - 1 and rest_day is not None:
            events_at(node, T0 + rest_day * DAY, TO_SERVICE)
        elif i == n - 1:
            events_at(node, T0 + DAY, ["inspect", "inspected", "deploy", "booted", "fail"])
    return nodes


def test_a_rack_reaches_95_percent_on_day_3(rack, api):
    bring_up(rack)
    with time_machine.travel(T0 + 5 * DAY, tick=False):
        body = get(api("manager"), "/api/v1/reports/rack-to-revenue/")
    (row,) = body["results"]
    assert row["gpus"] == 160 and row["started"].startswith("2026-03-02T00:00")
    assert row["reached"].startswith("2026-03-05T00:00") and row["hours"] == 72.0
    assert body["summary"] == {"racks": 1, "reached": 1, "median_hours": 72.0, "p90_hours": 72.0}
    assert body["by_month"]["2026-03"]["reached"] == 1
    assert RackReach.objects.get(rack=rack).gpus == 160  # remembered


def test_a_rack_not_there_says_how_long_it_waited_and_what_holds_it(rack, api):
    bring_up(rack, rest_day=None)  # the rest still enrolled
    rack.delivered = T0 - DAY
    rack.save()
    with time_machine.travel(T0 + 5 * DAY, tick=False):
        body = get(api("manager"), "/api/v1/reports/rack-to-revenue/", threshold="0.95")
        lower = get(api("manager"), "/api/v1/reports/rack-to-revenue/", threshold="0.5")
    (row,) = body["results"]
    assert row["reached"] is None and row["hours"] is None
    assert row["waiting_hours"] == 144.0  # from the recorded delivery
    assert row["holding"] == {"in_service": 96, "enrolled": 56, "failed": 8}
    assert lower["results"][0]["hours"] == 48.0


def test_a_remembered_rack_is_computed_again_when_its_gpus_change(rack, api):
    bring_up(rack, n=4, first=3, first_day=1)  # 24 of 32 GPUs in service from day 1
    with time_machine.travel(T0 + 3 * DAY, tick=False):
        before = get(api("manager"), "/api/v1/reports/rack-to-revenue/", threshold="0.7")
    node_at(T0 + 3 * DAY, rack=rack, gpu_count=8, hostname="late", serial="LATE")
    with time_machine.travel(T0 + 3 * DAY, tick=False):
        after = get(api("manager"), "/api/v1/reports/rack-to-revenue/", threshold="0.7")
    assert before["results"][0]["gpus"] == 32 and before["results"][0]["hours"] == 24.0
    # 40 GPUs now: 28 needed, 24 in service.
    assert after["results"][0]["gpus"] == 40 and after["results"][0]["reached"] is None


@pytest.mark.parametrize("value", ["0", "1.5", "abc", "-1"])
def test_a_bad_threshold_is_a_400_naming_it(api, value, db):
    response = api("manager").get("/api/v1/reports/rack-to-revenue/", {"threshold": value})
    assert response.status_code == 400 and "threshold" in response.json()


def test_first_pass_yield_counts_each_nodes_first_decided_run(rack, api):
    passing = node_at(T0, rack=rack, hostname="p1", serial="P1", gpu_model="H100-SXM")
    failing = node_at(T0, rack=rack, hostname="f1", serial="F1", gpu_model="H100-SXM")
    other = node_at(T0, rack=rack, hostname="o1", serial="O1", gpu_model="B200")
    with time_machine.travel(T0 + H, tick=False):
        GateRunFactory(node=passing, status="passed")
        run = GateRunFactory(node=failing, status="failed")
        CheckResultFactory(run=run, check_name="dcgm-diag", status="fail")
        CheckResultFactory(run=run, check_name="nccl", status="pass")
    with time_machine.travel(T0 + 2 * H, tick=False):
        GateRunFactory(node=failing, status="passed")  # the second try does not count
        GateRunFactory(node=other, status="cancelled")  # decides nothing
    with time_machine.travel(T0 + DAY, tick=False):
        body = get(api("manager"), "/api/v1/reports/yield/", **{"from": "2026-03-02"})
    assert body["first_pass"] == {"passed": 1, "runs": 2, "yield": 0.5}
    assert body["by_gpu_model"] == {"H100-SXM": {"passed": 1, "runs": 2, "yield": 0.5}}
    assert body["failing_checks"] == [{"check_name": "dcgm-diag", "failures": 1, "nodes": 1}]


def test_mttr_mtbf_and_rma_age(rack, api):
    node = node_at(T0, rack=rack, gpu_count=8)
    events_at(node, T0, TO_SERVICE)
    events_at(node, T0 + 100 * H, OUT_TO_RMA)  # 100 h in service, then a failure
    events_at(node, T0 + 110 * H, ["repaired", "inspected", "deploy", "booted", "admit"])
    events_at(node, T0 + 150 * H, ["drain", "fail"])  # 40 h more in service, failed again
    with time_machine.travel(T0 + 150 * H, tick=False):
        Case.objects.create(
            node=node,
            reason="GPU 3 fell off the bus",
            sla_due=T0 + 200 * H,
            opened=T0 + 150 * H,
            opened_by="system",
        )
    with time_machine.travel(T0 + 160 * H, tick=False):
        body = get(api("manager"), "/api/v1/reports/reliability/", **{"from": "2026-03-02"})
    every = body["all"]
    assert every["repairs"] == 1 and every["mttr_hours"] == 10.0
    assert every["failures_in_service"] == 2 and every["in_service_node_hours"] == 140.0
    assert every["mtbf_hours"] == 70.0
    assert every["rma_open"] == 1 and every["rma_mean_age_hours"] == 10.0
    assert body["repair_hours"] == [10.0]
    assert body["by_gpu_model"]["H100-SXM"]["mtbf_hours"] == 70.0


def test_revenue_realised_potential_and_lost_by_cause(rack, api):
    node = node_at(T0, rack=rack, gpu_count=8, gpu_model="H100-SXM")
    events_at(node, T0, TO_SERVICE)
    events_at(node, T0 + 10 * H, OUT_TO_RMA)
    node_at(T0, rack=RackFactory(site=rack.site, name="r9"), gpu_count=4, gpu_model="B200")
    GpuPrice.objects.create(gpu_model="H100-SXM", price_per_gpu_hour="2.5", currency="USD")
    with time_machine.travel(T0 + 12 * H, tick=False):
        body = get(api("manager"), "/api/v1/reports/revenue/", **{"from": T0.isoformat()})
        summary = get(api("manager"), "/api/v1/reports/summary/")
    assert body["totals"] == {
        "USD": {"realised": 200.0, "potential": 240.0, "lost": 40.0, "lost_by_cause": {"rma": 40.0}}
    }
    assert body["unpriced_models"] == ["B200"]
    b200 = next(r for r in body["by_gpu_model"] if r["gpu_model"] == "B200")
    assert b200["lost_gpu_hours_by_cause"] == {"awaiting": 48.0} and b200["lost"] is None
    assert summary["gpus_total"] == 12 and summary["gpus_in_service"] == 0
    assert summary["lost_gpu_hours_7d"] == 16.0 + 48.0
    assert summary["lost_revenue_7d"] == {"USD": 40.0}


def test_only_admins_set_prices(api, db):
    body = {"gpu_model": "H200-SXM", "price_per_gpu_hour": "3.10", "currency": "usd"}
    assert api("integration").post("/api/v1/reports/prices/", body).status_code == 403
    response = api("admin").post("/api/v1/reports/prices/", body)
    assert response.status_code == 400 and "currency" in response.json()
    body["currency"] = "USD"
    assert api("admin").post("/api/v1/reports/prices/", body).status_code == 201
