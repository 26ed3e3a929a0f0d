"""A ticketing system does not overwrite a technician: ETag on read, If-Match on update.

Without If-Match an update is last-writer-wins, as before (clients that never read ETags
keep working); with it, a stale write is a 412 naming the current ETag and nothing changes.
"""

from __future__ import annotations

import pytest

from inventory.models import Node, Rack
from rma.models import Case
from tests.factories import RMACaseFactory

CASES = [
    ("node", "/api/v1/nodes/{}/", {"model": "ticket's"}, {"model": "technician's"}),
    ("rack", "/api/v1/racks/{}/", {"row": "ticket's"}, {"row": "technician's"}),
    ("case", "/api/v1/rma-cases/{}/", {"vendor": "ticket's"}, {"vendor": "technician's"}),
]


@pytest.fixture
def objects(node):
    return {"node": node, "rack": node.rack, "case": RMACaseFactory(node=node)}


def stored(kind: str, obj) -> str:
    if kind == "node":
        return Node.objects.get(pk=obj.pk).model
    if kind == "rack":
        return Rack.objects.get(pk=obj.pk).row
    return Case.objects.get(pk=obj.pk).vendor


@pytest.mark.django_db
@pytest.mark.parametrize("kind, url, theirs, mine", CASES, ids=[c[0] for c in CASES])
def test_a_stale_write_is_refused_with_412_and_changes_nothing(
    api, objects, kind, url, theirs, mine
):
    obj = objects[kind]
    url = url.format(obj.pk)
    ticketing, technician = api("integration"), api("admin")
    read = ticketing.get(url)
    etag = read["ETag"]
    assert etag.startswith('"') and etag.endswith('"')

    # The technician writes first.
    resp = technician.patch(url, mine, format="json")
    assert resp.status_code == 200, resp.content
    assert resp["ETag"] != etag

    # The ticketing system's write, based on what it read before, is refused.
    resp = ticketing.patch(url, theirs, format="json", HTTP_IF_MATCH=etag)
    assert resp.status_code == 412, resp.content
    assert "changed since you read it" in resp.data["detail"]
    assert resp.data["etag"] == ticketing.get(url)["ETag"]
    assert stored(kind, obj) == next(iter(mine.values()))

    # Read again, reapply: accepted, and the answer carries the new ETag.
    fresh = ticketing.get(url)["ETag"]
    resp = ticketing.patch(url, theirs, format="json", HTTP_IF_MATCH=fresh)
    assert resp.status_code == 200, resp.content
    assert stored(kind, obj) == next(iter(theirs.values()))
    assert resp["ETag"] == ticketing.get(url)["ETag"]


@pytest.mark.django_db
def test_without_if_match_the_last_writer_wins_as_before(api, node):
    resp = api("integration").patch(f"/api/v1/nodes/{node.pk}/", {"model": "x"}, format="json")
    assert resp.status_code == 200


@pytest.mark.django_db
def test_if_match_star_and_lists_follow_the_rfc(api, node):
    client = api("integration")
    url = f"/api/v1/nodes/{node.pk}/"
    etag = client.get(url)["ETag"]
    resp = client.patch(url, {"model": "a"}, format="json", HTTP_IF_MATCH="*")
    assert resp.status_code == 200
    new = client.get(url)["ETag"]
    resp = client.patch(url, {"model": "b"}, format="json", HTTP_IF_MATCH=f"{etag}, {new}")
    assert resp.status_code == 200
    weak = "W/" + client.get(url)["ETag"]  # a weak tag never matches for a write
    assert client.patch(url, {"model": "c"}, format="json", HTTP_IF_MATCH=weak).status_code == 412


@pytest.mark.django_db
def test_the_schema_declares_if_match_on_the_updates(api):
    schema = api("admin").get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path in ("/api/v1/nodes/{id}/", "/api/v1/racks/{id}/", "/api/v1/rma-cases/{id}/"):
        names = [p["name"] for p in schema["paths"][path]["patch"].get("parameters", [])]
        assert "If-Match" in names, path
