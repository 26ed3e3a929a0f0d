"""The fleet over REST, as a pipeline calls it: plan, apply with the plan's revision,
problems as a 400 naming file and line, a stale plan a 409, secrets never echoed, and
bodies the size of a site's files."""

from __future__ import annotations

import json
import re

import pytest
from django.test import override_settings

from fleetfile.models import FleetApply
from inventory.models import Node
from tests.factories import SiteFactory
from tests.test_site_scope_api import site_client

from .fleet import EXPORTED, NODES, objects_in
from .specs import FILES, SECRETS

pytestmark = pytest.mark.django_db


def body(**more) -> dict:
    return {"files": FILES, "secrets": SECRETS, **more}


def test_a_pipeline_plans_then_applies_that_plan_and_the_trail_names_its_commit(api):
    plan = api("integration").post("/api/v1/fleet/plan/", body(), format="json")
    assert plan.status_code == 200, plan.content
    planned = plan.json()
    assert planned["summary"]["create"] == 6
    gx1 = next(c for c in planned["changes"] if c["key"] == "SN-0001")
    assert (gx1["action"], gx1["object"], gx1["where"]) == (
        "create", "node SN-0001 (gx-001)", "fleet/nodes.yaml:2"
    )  # fmt: skip
    assert {"name": "bmc.password", "old": None, "new": "(given)"} in gx1["fields"]
    assert "from-the-vault-1" not in plan.content.decode()

    done = api("admin").post(
        "/api/v1/fleet/apply/",
        body(revision=planned["revision"], commit="9f2c1ab", path="fleet/"),
        format="json",
    )
    assert done.status_code == 200, done.content
    assert (done.json()["applied"], done.json()["revision"]) == (True, planned["revision"])
    assert Node.objects.get(serial="SN-0001").bmc.password == "from-the-vault-1"
    record = api("manager").get(f"/api/v1/fleet/{done.json()['apply']}/").json()
    assert (record["actor"], record["commit"], record["path"]) == (
        "token:admin-user", "9f2c1ab", "fleet/"
    )  # fmt: skip

    again = api("admin").post("/api/v1/fleet/apply/", body(), format="json")
    assert (again.json()["applied"], again.json()["summary"]["unchanged"]) == (False, 6)
    assert FleetApply.objects.count() == 1


def test_problems_are_a_400_naming_file_line_and_path_and_nothing_is_written(api):
    files = [
        *FILES[:2],
        {"name": "fleet/nodes.yaml", "content": NODES.replace("unit: 5", "unit: 3")},
    ]
    resp = api("admin").post(
        "/api/v1/fleet/apply/", {"files": files, "secrets": SECRETS}, format="json"
    )
    assert resp.status_code == 400, resp.content
    assert resp.json() == {
        "detail": "The fleet files have 1 problem; nothing was written.",
        "problems": [
            {
                "file": "fleet/nodes.yaml",
                "line": 24,
                "path": "nodes[1].unit",
                "message": "U3-U6 overlaps gx-001 at U1-U4 in rack r01.",
            }
        ],
    }
    assert not Node.objects.exists()


def test_the_server_never_reads_its_own_environment_for_a_reference(api, monkeypatch):
    monkeypatch.setenv("BMC_PASSWORD", "the-servers-own-secret")
    resp = api("integration").post("/api/v1/fleet/plan/", {"files": FILES}, format="json")
    assert resp.status_code == 400
    assert resp.json()["problems"][0]["message"] == (
        "env:BMC_PASSWORD: no value was sent for it (`secrets` of the request)"
    )
    assert "the-servers-own-secret" not in resp.content.decode()


def test_a_stale_plan_is_a_409_and_changes_nothing(api):
    api("admin").post("/api/v1/fleet/apply/", body(), format="json")
    files = [
        *FILES[:2],
        {"name": "fleet/nodes.yaml", "content": NODES.replace("gpu_count: 8", "gpu_count: 4")},
    ]
    planned = (
        api("admin")
        .post("/api/v1/fleet/plan/", {"files": files, "secrets": SECRETS}, format="json")
        .json()
    )
    Node.objects.filter(serial="SN-0002").update(model="racked by hand")
    resp = api("admin").post(
        "/api/v1/fleet/apply/",
        {"files": files, "secrets": SECRETS, "revision": planned["revision"]},
        format="json",
    )
    assert resp.status_code == 409
    assert resp.json()["revision"] == planned["revision"]
    assert Node.objects.get(serial="SN-0001").gpu_count == 8


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000, CORRAL_FLEET_MAX_BYTES=200_000)
def test_a_sites_files_may_be_larger_than_other_requests_up_to_their_own_limit(api):
    assert len(json.dumps(body())) > 1000
    assert api("integration").post("/api/v1/fleet/plan/", body(), format="json").status_code == 200
    padded = [*FILES, {"name": "fleet/big.yaml", "content": "# " + "x" * 200_000}]
    resp = api("integration").post("/api/v1/fleet/plan/", {"files": padded}, format="json")
    assert resp.status_code == 413
    assert resp.json()["detail"] == (
        "The request body is larger than 200000 bytes; send less per request."
    )


def test_export_then_apply_changes_nothing(api):
    api("admin").post("/api/v1/fleet/apply/", body(), format="json")
    exported = api("manager").get("/api/v1/fleet/export/").json()["files"]
    assert [f["name"] for f in exported] == list(EXPORTED)
    text = "".join(f["content"] for f in exported)
    assert "from-the-vault-1" not in text and not re.search(r"^\s+password:", text, re.M)
    plan = api("integration").post("/api/v1/fleet/plan/", {"files": exported}, format="json").json()
    listed = objects_in(f["content"] for f in exported)  # 6, and the shipped gates and policy
    assert (plan["changes"], plan["summary"]["unchanged"]) == ([], listed)


def test_a_sites_role_cannot_plan_apply_or_export_the_fleet():
    client = site_client("admin", SiteFactory(slug="dc1"))
    assert client.get("/api/v1/fleet/export/").status_code == 403
    for verb in ("plan", "apply"):
        resp = client.post(f"/api/v1/fleet/{verb}/", body(), format="json")
        assert resp.status_code == 403
        assert resp.json()["detail"].endswith("fleet-wide.")
    assert not Node.objects.exists()
