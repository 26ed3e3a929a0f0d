"""Bad input is the client's to fix: a 400 (or 413) naming what is wrong, never a 500.

Each case here was a server error once (issue #16): JSON nested past the parser's stack,
bodies that are lists where objects are expected, NUL characters (PostgreSQL refuses
them), UTC offsets out of range, binary CSV files, unbounded lists and bodies.
"""

from __future__ import annotations

import io
import json
import time

import pytest
from django.test import Client

from core import jsonsafe
from inventory.imports import COLUMNS
from inventory.models import Node
from tests.factories import BootRequestFactory, NodeFactory, RackFactory

DEEP = 100_000  # far past Python's recursion limit


def deep_json(depth: int = DEEP) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def post_raw(client, url: str, body: str | bytes):
    return client.generic("POST", url, body, content_type="application/json")


@pytest.fixture
def admin(api):
    return api("admin")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/sites/",
        "/api/v1/nodes/actions/power/",
        "/api/v1/rma-cases/assign/",
    ],
)
def test_deeply_nested_json_is_a_400_naming_the_depth(admin, url):
    resp = post_raw(admin, url, deep_json())
    assert resp.status_code == 400, resp.content
    assert "nested" in resp.json()["detail"]


@pytest.mark.django_db
def test_deeply_nested_json_on_the_boot_callback_is_a_400():
    resp = post_raw(Client(), "/boot/callback", deep_json())
    assert resp.status_code == 400, resp.content
    assert "nested" in resp.json()["detail"]


@pytest.mark.django_db
def test_moderately_nested_json_past_the_cap_is_refused(admin, node):
    resp = post_raw(admin, f"/api/v1/nodes/{node.pk}/facts/", deep_json(40))
    assert resp.status_code == 400, resp.content
    assert "nested" in resp.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["rack", "node", "bulk"])
def test_a_list_body_for_an_action_is_a_400(admin, node, kind):
    url = {
        "rack": f"/api/v1/racks/{node.rack_id}/actions/power/",
        "node": f"/api/v1/nodes/{node.pk}/actions/power_on/",
        "bulk": "/api/v1/nodes/actions/power/",
    }[kind]
    resp = post_raw(admin, url, json.dumps([{"state": "on"}]))
    assert resp.status_code == 400, resp.content
    assert "Expected a dictionary" in json.dumps(resp.json())


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "param"),
    [
        ("/api/v1/boot-requests/", "mac"),
        ("/api/v1/nodes/", "model"),
        ("/api/v1/nodes/", "q"),
        ("/api/v1/nodes/", "ordering"),
        ("/api/v1/sites/", "search"),
        ("/api/v1/events/", "actor"),
    ],
)
def test_a_nul_in_a_query_filter_is_a_400_naming_it(admin, url, param):
    BootRequestFactory()
    resp = admin.get(url, {param: "52:54\x00"})
    assert resp.status_code == 400, resp.content
    assert param in resp.json(), resp.json()


@pytest.mark.django_db
def test_a_nul_in_a_dashboard_query_is_a_400(client, users):
    client.force_login(users["admin"])
    resp = client.get("/nodes/", {"q": "gpu\x00"})
    assert resp.status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Hall\u0000", "slug": "hall-nul"}, "name"),
        ({"name": "Hall", "slug": "hall-nul", "desc\u0000": "x"}, "desc\\u0000"),
    ],
)
def test_a_nul_in_a_json_string_or_key_is_a_400_naming_the_field(admin, body, field):
    resp = post_raw(admin, "/api/v1/sites/", json.dumps(body))
    assert resp.status_code == 400, resp.content
    assert field in resp.json(), resp.json()


@pytest.mark.django_db
def test_a_nul_deep_in_node_facts_names_its_path(admin, node):
    body = {"source": "ansible", "facts": {"os": {"kernel": "bad\u0000"}}}
    resp = post_raw(admin, f"/api/v1/nodes/{node.pk}/facts/", json.dumps(body))
    assert resp.status_code == 400, resp.content
    assert "facts.os.kernel" in resp.json(), resp.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("facts", "field"),
    [
        ({"os": {"kernel": "bad\ud800"}}, "facts.os.kernel"),
        ({"os": {"k\udfff": "6.8"}}, "facts.os.k\\udfff"),
    ],
)
def test_a_lone_surrogate_in_node_facts_is_a_400_naming_its_path(admin, node, facts, field):
    """UTF-8 cannot encode half a surrogate pair, so PostgreSQL never saw it: a 500."""
    body = json.dumps({"source": "ansible", "facts": facts})
    assert "\\ud" in body  # sent as JSON sends it: an escape, not a raw code point
    resp = post_raw(admin, f"/api/v1/nodes/{node.pk}/facts/", body)
    assert resp.status_code == 400, resp.content
    assert field in resp.json(), resp.json()
    assert "surrogate" in str(resp.json()[field])
    assert not node.facts.exists()


def test_a_proper_surrogate_pair_is_a_character_and_passes():
    assert jsonsafe.loads('{"a": "\\ud83d\\ude80"}') == {"a": "\U0001f680"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "param"),
    [
        ("/api/v1/events/", "since"),
        ("/api/v1/drift/events/", "since"),
        ("/api/v1/rma-cases/", "updated_since"),
    ],
)
@pytest.mark.parametrize(
    "when",
    [
        "2024-05-01T10:00:00+99:00",
        "2024-05-01T10:00:00-24:00",
        "2024-05-01T10:00:00-20:19",  # parses, but no place on Earth keeps it
        "2024-05-01T10:00:00+14:01",
        "9999-12-31T23:59:59-01:00",  # past year 9999 in UTC
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
    ],
)
def test_since_with_an_out_of_range_utc_offset_is_a_400(admin, url, param, when):
    resp = admin.get(url, {param: when})
    assert resp.status_code == 400, resp.content
    assert param in resp.json(), resp.json()


@pytest.mark.django_db
@pytest.mark.parametrize("when", ["2024-05-01T10:00:00+14:00", "2024-05-01T10:00:00-12:00"])
def test_since_with_a_real_utc_offset_is_taken(admin, when):
    assert admin.get("/api/v1/events/", {"since": when}).status_code == 200


def import_upload(data: bytes):
    return {"file": io.BytesIO(data)}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 8,  # binary
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
        (",".join(COLUMNS) + "\ndc1,r01,1,SN\x00,h,m,g,8,redfish,10.0.0.1,a,p,x\n").encode(),
    ],
    ids=["binary", "png", "nul"],
)
def test_a_binary_csv_import_is_a_400_over_the_api_and_the_dashboard(admin, client, users, data):
    RackFactory()
    resp = admin.post("/api/v1/nodes/import/", import_upload(data), format="multipart")
    assert resp.status_code == 400, resp.content
    assert "file" in resp.json()
    client.force_login(users["admin"])
    page = client.post("/nodes/import/", import_upload(data))
    assert page.status_code == 200 and b'id="import-refused"' in page.content
    assert not Node.objects.exists()


@pytest.mark.django_db
def test_an_unbounded_label_list_is_refused_at_once(admin, node):
    started = time.monotonic()
    body = json.dumps({"labels": [f"l{i}" for i in range(200_000)]})
    resp = admin.generic(
        "PATCH", f"/api/v1/nodes/{node.pk}/", body, content_type="application/json"
    )
    assert time.monotonic() - started < 5
    assert resp.status_code in (400, 413), resp.content


@pytest.mark.django_db
def test_more_labels_than_the_cap_is_a_400_naming_labels(admin, node):
    body = {"labels": [f"l{i}" for i in range(65)]}
    resp = admin.patch(f"/api/v1/nodes/{node.pk}/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert "labels" in resp.json()
    ok = admin.patch(f"/api/v1/nodes/{node.pk}/", {"labels": body["labels"][:64]}, format="json")
    assert ok.status_code == 200, ok.content


@pytest.mark.django_db
def test_an_oversize_body_is_a_json_413(admin, settings):
    body = json.dumps({"name": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10), "slug": "x"})
    resp = post_raw(admin, "/api/v1/sites/", body)
    assert resp.status_code == 413, resp.content
    assert "detail" in resp.json()


@pytest.mark.django_db
def test_csv_labels_follow_the_api_label_rules(admin):
    rack = RackFactory()
    labels = ";".join(f"l{i}" for i in range(65))
    csv = (
        ",".join((*COLUMNS, "labels"))
        + f"\n{rack.site.slug},{rack.name},1,SN-L,gpu-l,M,H100-SXM,8,redfish,10.0.0.1,"
        f"admin,pw,52:54:00:00:0f:01,{labels}\n"
    )
    resp = admin.post("/api/v1/nodes/import/", import_upload(csv.encode()), format="multipart")
    assert resp.status_code == 202, resp.content
    assert resp.json()["status"] == "failed"
    fields = {e["field"] for e in resp.json()["result"]["errors"]}
    assert fields == {"labels"}, resp.json()["result"]
    assert not NodeFactory._meta.model.objects.exists()
