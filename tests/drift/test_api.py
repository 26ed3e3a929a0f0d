"""The drift API as an integrator uses it: report facts, read the matrix and its summary,
keep baselines."""

import pytest

from drift import baselines
from drift.models import Baseline, BaselineRevision
from inventory.models import Fact
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet():
    """Two halls; three H100 nodes, one with an old BMC and one odd GPU."""
    baselines.save(
        {
            "name": "hgx-h100",
            "node_model": "HGX H100",
            "components": {"firmware.BMC": "1.45", "gpu.vbios": "96.00.89.00.01"},
        },
        "user:admin",
    )
    a = RackFactory(site=SiteFactory(slug="hall-a"), name="a01")
    b = RackFactory(site=SiteFactory(slug="hall-b"), name="b01")
    nodes = [
        NodeFactory(rack=r, model="HGX H100", hostname=f"gpu-{i}") for i, r in enumerate([a, a, b])
    ]
    return nodes


def post_facts(client, node, facts, source="node-agent"):
    return client.post(
        f"/api/v1/nodes/{node.pk}/facts/", {"source": source, "facts": facts}, "json"
    )


def fill(client, fleet):
    good = [{"vbios": "96.00.89.00.01"}] * 8
    odd = [*good[:7], {"vbios": "96.00.74.00.0B"}]
    assert (
        post_facts(client, fleet[0], {"firmware": {"BMC": "1.45"}, "gpus": good}).status_code == 201
    )
    assert (
        post_facts(client, fleet[1], {"firmware": {"BMC": "1.40"}, "gpus": good}).status_code == 201
    )
    assert (
        post_facts(client, fleet[2], {"firmware": {"BMC": "1.45"}, "gpus": odd}).status_code == 201
    )


def test_an_agent_reports_facts_and_unknown_keys_are_kept(api, fleet):
    resp = post_facts(
        api("integration"),
        fleet[0],
        {"kernel": "6.8.0-45-generic", "ofed": "24.07", "firmware": {"CX7": "28.41.1000"}},
    )
    assert resp.status_code == 201, resp.content
    assert {r["key"]: r["value"] for r in resp.data} == {
        "kernel": "6.8.0-45-generic",
        "ofed": "24.07",
        "firmware.CX7": "28.41.1000",
    }
    assert all(r["source"] == "node-agent" and r["gpu"] is None for r in resp.data)
    listed = api("manager").get(f"/api/v1/nodes/{fleet[0].pk}/facts/")
    assert {r["key"] for r in listed.data} == {"kernel", "ofed", "firmware.CX7"}


@pytest.mark.parametrize("facts", [{}, {"kernel": None}, {"firmware": {}}])
def test_a_report_with_no_values_records_nothing_and_is_not_an_error(api, fleet, facts):
    """Its shape is valid, so an integration generated from the schema must not get a 400
    it cannot avoid (schemathesis found `{"facts": {}}` answered 400)."""
    resp = api("integration").post(
        f"/api/v1/nodes/{fleet[0].pk}/facts/", {"source": "ansible", "facts": facts}, "json"
    )
    assert resp.status_code == 201, resp.content
    assert resp.data == []
    assert not Fact.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source": "ansible", "facts": {"firmware": {"BMC": {"v": 1}}}}, "firmware.BMC"),
        ({"source": "ansible", "facts": {"gpus": "eight"}}, "gpus"),
        ({"source": "ansible", "facts": []}, None),
        ({"source": "redfish", "facts": {"kernel": "6"}}, None),
        ({"source": "Not Valid", "facts": {"kernel": "6"}}, None),
        ({"facts": {"kernel": "6"}}, None),
    ],
)
def test_a_bad_report_is_a_400_naming_what_to_fix_and_stores_nothing(api, fleet, body, field):
    resp = api("integration").post(f"/api/v1/nodes/{fleet[0].pk}/facts/", body, "json")
    assert resp.status_code == 400, resp.content
    if field:
        assert field in resp.data["facts"]
    assert not Fact.objects.exists()


def test_technicians_and_managers_cannot_write_facts(api, fleet):
    for role in ("technician", "manager"):
        assert post_facts(api(role), fleet[0], {"kernel": "6"}).status_code == 403
    assert (
        post_facts(api("integration"), NodeFactory.build(pk=999999), {"k": "1"}).status_code == 404
    )


def test_the_matrix_rows_and_filters(api, fleet):
    fill(api("integration"), fleet)
    client = api("manager")
    resp = client.get("/api/v1/drift/", {"only_drifted": "true"})
    assert resp.status_code == 200
    rows = {r["hostname"]: r for r in resp.data["results"]}
    assert set(rows) == {"gpu-1", "gpu-2"}
    assert rows["gpu-1"]["drifted"] == ["firmware.BMC"]
    assert rows["gpu-1"]["site"] == "hall-a" and rows["gpu-1"]["rack"] == "a01"
    bmc = rows["gpu-1"]["cells"]["firmware.BMC"]
    assert (bmc["expected"], bmc["observed"], bmc["status"], bmc["source"]) == (
        "1.45",
        "1.40",
        "drift",
        "node-agent",
    )
    vbios = rows["gpu-2"]["cells"]["gpu.vbios"]
    assert vbios["status"] == "drift"
    assert vbios["observed"] == "96.00.89.00.01 ×7, 96.00.74.00.0B ×1"
    assert [g["gpu"] for g in vbios["gpus"] if g["status"] == "drift"] == [7]
    hall_b = client.get("/api/v1/drift/", {"site": "hall-b", "component": "firmware.BMC"})
    assert [r["hostname"] for r in hall_b.data["results"]] == ["gpu-2"]
    assert list(hall_b.data["results"][0]["cells"]) == ["firmware.BMC"]
    on_bmc = client.get("/api/v1/drift/", {"component": "firmware.BMC", "only_drifted": "true"})
    assert [r["hostname"] for r in on_bmc.data["results"]] == ["gpu-1"]


def test_the_summary_counts_drift_and_version_skew(api, fleet):
    fill(api("integration"), fleet)
    resp = api("manager").get("/api/v1/drift/summary/")
    assert resp.status_code == 200
    assert (resp.data["nodes"], resp.data["drifted_nodes"]) == (3, 2)
    bmc = resp.data["components"]["firmware.BMC"]
    assert (bmc["expected"], bmc["drifted"], bmc["unknown"]) == ("1.45", 1, 0)
    assert bmc["versions"] == {"1.45": 2, "1.40": 1}
    vbios = resp.data["components"]["gpu.vbios"]
    assert (vbios["drifted"], vbios["per_gpu"]) == (1, True)
    assert vbios["versions"] == {"96.00.89.00.01": 23, "96.00.74.00.0B": 1}  # GPUs
    hall_a = api("manager").get("/api/v1/drift/summary/", {"site": "hall-a"})
    assert hall_a.data["components"]["firmware.BMC"]["versions"] == {"1.45": 1, "1.40": 1}


def test_baselines_are_admin_written_validated_and_versioned(api, users, fleet):
    b = Baseline.objects.get(name="hgx-h100")
    url = f"/api/v1/baselines/{b.pk}/"
    assert api("integration").patch(url, {"components": {"x": "1"}}, "json").status_code == 403
    bad = api("admin").patch(url, {"components": {"firmware.BMC": {"v": 1}}}, "json")
    assert bad.status_code == 400 and "firmware.BMC" in str(bad.data["components"])
    dup = api("admin").post(
        "/api/v1/baselines/",
        {"name": "again", "node_model": "hgx h100", "components": {"a": "1"}},
        "json",
    )
    assert dup.status_code == 400 and "hgx-h100" in str(dup.data)
    ok = api("admin").patch(url, {"components": {"firmware.BMC": "1.50"}}, "json")
    assert ok.status_code == 200 and ok.data["revision"] == 2
    assert ok.data["updated_by"] == f"token:{users['admin'].username}"
    history = api("manager").get(f"{url}revisions/")
    assert [(r["revision"], r["action"]) for r in history.data] == [(2, "updated"), (1, "created")]
    assert api("admin").delete(url).status_code == 204
    assert BaselineRevision.objects.filter(name="hgx-h100", action="deleted").exists()


def test_a_nodes_own_drift_and_history(api, fleet):
    fill(api("integration"), fleet)
    resp = api("manager").get(f"/api/v1/nodes/{fleet[1].pk}/drift/")
    assert resp.data["drifted"] == ["firmware.BMC"]
    events = api("manager").get("/api/v1/drift/events/", {"node": fleet[1].pk})
    assert [(e["component"], e["kind"], e["observed"]) for e in events.data["results"]] == [
        ("firmware.BMC", "detected", "1.40")
    ]
