"""The event API: per node (one or many), bulk by hostname, strict validation, roles."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from health.models import HealthEvent, HealthPolicy
from inventory.models import Operation, SiteRole
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token, user_in

pytestmark = pytest.mark.django_db
BULK = "/api/v1/health-events/"


def url(node) -> str:
    return f"/api/v1/nodes/{node.pk}/health-events/"


def xid(code, **fields) -> dict:
    return {"source": "dcgm-exporter", "kind": "xid", "code": code, **fields}


def test_one_event_is_answered_with_its_decision(api, rack5):
    node = rack5[0]
    resp = api("integration").post(
        url(node), xid(79, gpu=3, message="GPU 3 fell off"), format="json"
    )
    assert resp.status_code == 201, resp.content
    [row] = resp.data
    op = Operation.objects.get(node=node, kind="recycle")
    assert row["node"] == node.pk and row["hostname"] == node.hostname
    assert (row["code"], row["gpu"], row["event_class"]) == ("79", "3", "reboot")
    assert (row["decision"], row["status"], row["operation"]) == ("recycle", "started", op.pk)
    assert row["reported_by"] == "token:integration-user"


def test_a_list_for_one_node_is_decided_in_order(api, rack5):
    body = [xid(61), xid("61"), xid(61, gpu="0000:3b:00.0")]
    resp = api("technician").post(url(rack5[0]), body, format="json")
    assert resp.status_code == 201, resp.content
    assert [r["decision"] for r in resp.data] == ["watch", "watch", "recycle"]
    assert resp.data[2]["gpu"] == "0000:3b:00.0"


def test_bulk_by_hostname(api, rack5):
    a, b = rack5[0], rack5[1]
    events = [
        {**xid(13), "node": a.hostname},
        {"node": b.hostname, "source": "node-agent", "kind": "thermal", "code": "slowdown"},
    ]
    resp = api("integration").post(BULK, {"events": events}, format="json")
    assert resp.status_code == 201, resp.content
    assert [(r["hostname"], r["decision"]) for r in resp.data] == [
        (a.hostname, "ignore"),
        (b.hostname, "watch"),
    ]


def test_bulk_with_an_unknown_hostname_names_it_and_writes_nothing(api, rack5):
    events = [{**xid(79), "node": rack5[0].hostname}, {**xid(79), "node": "gpu-nope"}]
    resp = api("integration").post(BULK, {"events": events}, format="json")
    assert resp.status_code == 400
    assert "gpu-nope" in str(resp.data["events"]) and rack5[0].hostname not in str(resp.data)
    assert not HealthEvent.objects.exists() and not Operation.objects.exists()


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"kind": "smoke"}, "kind"),
        ({"code": "seventy-nine"}, "code"),
        ({"code": True}, "code"),
        ({"gpu": 4096}, "gpu"),
        ({"source": "DCGM Exporter"}, "source"),
        ({"at": "2099-01-01T00:00:00Z"}, "at"),
    ],
)
def test_a_bad_row_is_a_400_naming_the_field_and_nothing_is_written(api, rack5, bad, field):
    events = [{**xid(79), "node": rack5[0].hostname}, {**xid(79), "node": rack5[1].hostname, **bad}]
    resp = api("integration").post(BULK, {"events": events}, format="json")
    assert resp.status_code == 400, resp.content
    assert field in resp.json()["events"]["1"], resp.data
    assert not HealthEvent.objects.exists()


def test_missing_fields_are_named(api, rack5):
    resp = api("integration").post(url(rack5[0]), {"kind": "xid"}, format="json")
    assert resp.status_code == 400
    assert {"source", "code"} <= set(resp.data)


def test_a_little_clock_skew_is_accepted(api, rack5):
    soon = (timezone.now() + timedelta(seconds=90)).isoformat()
    resp = api("integration").post(url(rack5[0]), xid(13, at=soon), format="json")
    assert resp.status_code == 201, resp.content


def test_posting_needs_act_in_the_node_s_site(api, rack5):
    assert api("manager").post(url(rack5[0]), xid(79), format="json").status_code == 403
    other = NodeFactory(rack=RackFactory(site=SiteFactory(slug="far")), state="in_service")
    tech = user_in(None, "tech-hall-h")
    SiteRole.objects.create(user=tech, site=rack5[0].rack.site, role="technician")
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {api_token(tech)}")
    # Another site's node is not found (issue 36: reads are scoped too); named in a
    # body, it is refused by name.
    assert scoped.post(url(other), xid(13), format="json").status_code == 404
    bulk = {"events": [{**xid(13), "node": other.hostname}]}
    resp = scoped.post(BULK, bulk, format="json")
    assert resp.status_code == 403 and other.hostname in resp.data["detail"]
    assert scoped.post(url(rack5[0]), xid(13), format="json").status_code == 201
    assert HealthEvent.objects.count() == 1


def test_list_filters_by_node_kind_and_since(api, rack5):
    a, b = rack5[0], rack5[1]
    old = (timezone.now() - timedelta(days=2)).isoformat()
    api("admin").post(url(a), [xid(13, at=old), xid(13)], format="json")
    api("admin").post(url(b), {"source": "bmc", "kind": "bmc", "code": "warning"}, format="json")
    reader = api("manager")
    assert reader.get(BULK, {"node": a.hostname}).data["count"] == 2
    assert reader.get(BULK, {"node": b.pk, "kind": "bmc"}).data["count"] == 1
    since = (timezone.now() - timedelta(hours=1)).isoformat()
    assert reader.get(BULK, {"since": since}).data["count"] == 2
    assert reader.get(BULK, {"kind": "smoke"}).status_code == 400


def test_policy_rows_are_checked_and_admin_only(api):
    body = {"kind": "xid", "match": "61", "action": "watch", "priority": 5}
    assert (
        api("technician").post("/api/v1/health-policies/", body, format="json").status_code == 403
    )
    resp = api("admin").post("/api/v1/health-policies/", body, format="json")
    assert resp.status_code == 400 and {"count", "window_minutes", "escalate_to"} <= set(resp.data)
    body.update(count=2, window_minutes=60, escalate_to="rma")
    resp = api("admin").post("/api/v1/health-policies/", body, format="json")
    assert resp.status_code == 201, resp.content
    row = HealthPolicy.objects.get(pk=resp.data["id"])
    assert row.describe() == "watch: 2 in 1 h -> rma"
    resp = api("admin").patch(
        f"/api/v1/health-policies/{row.pk}/", {"action": "ignore"}, format="json"
    )
    assert resp.status_code == 400 and "count" in resp.data


@pytest.mark.parametrize("kind", ["bmc", "nvlink", "thermal"])
def test_a_code_up_to_64_characters_is_stored_with_its_class(api, rack5, kind):
    """For these kinds the class is the code itself, so it needs the code's 64 characters
    (a 33-character BMC status was a 500: the class column held 32)."""
    code = "c" * 64
    body = {"source": "node-agent", "kind": kind, "code": code}
    resp = api("integration").post(url(rack5[0]), body, format="json")
    assert resp.status_code == 201, resp.content
    assert (resp.data[0]["code"], resp.data[0]["event_class"]) == (code, code)


def test_a_code_that_grows_past_64_characters_when_lowered_is_a_400(api, rack5):
    """Lower case may lengthen text ("İ" is two characters lowered): checked after it."""
    body = {"source": "bmc", "kind": "bmc", "code": "İ" * 40}
    resp = api("integration").post(url(rack5[0]), body, format="json")
    assert resp.status_code == 400, resp.content
    assert "64" in str(resp.data["code"])
    assert not HealthEvent.objects.exists()
