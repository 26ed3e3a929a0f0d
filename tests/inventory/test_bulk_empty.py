"""A bulk action with no nodes to act on is refused and starts nothing: an aggregate
Operation without children has nothing to end it, and stayed `running` for ever (issue 36,
finding 10: eleven rack power-ons on empty racks still running after 43 minutes)."""

import pytest
from django.core.exceptions import ValidationError

from inventory.bulk import start_bulk_action
from inventory.models import Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db
REFUSED = "Rack DC one/r01 has no nodes: 'Power on' was not started."


def test_the_api_refuses_a_rack_action_on_an_empty_rack(api, rack):
    NodeFactory(rack=rack, state="decommissioned")  # rack actions leave these out
    client = api("technician")
    url = f"/api/v1/racks/{rack.pk}/actions/power_on/"
    resp = client.post(url, {}, format="json")
    assert resp.status_code == 400, resp.content
    assert resp.data == {"nodes": [REFUSED]}
    # Under an Idempotency-Key too; the key is not spent on the refusal.
    resp = client.post(url, {}, format="json", HTTP_IDEMPOTENCY_KEY="empty-1")
    assert resp.status_code == 400 and resp.data == {"nodes": [REFUSED]}
    assert not Operation.objects.exists()
    NodeFactory(rack=rack)
    resp = client.post(url, {}, format="json", HTTP_IDEMPOTENCY_KEY="empty-1")
    assert resp.status_code == 202 and len(resp.data["children"]) == 1


def test_the_rack_page_refuses_an_empty_rack(client, users, rack):
    client.force_login(users["technician"])
    url = f"/racks/{rack.pk}/actions/power_on/"
    page = client.post(url, follow=True)
    assert page.status_code == 200 and REFUSED.replace("'", "&#x27;") in page.content.decode()
    part = client.post(url, headers={"HX-Request": "true"})
    html = part.content.decode()
    assert part.status_code == 200 and 'id="rack-progress"' in html
    assert REFUSED.replace("'", "&#x27;") in html and "alert-danger" in html
    assert not Operation.objects.exists()


def test_no_bulk_action_starts_without_nodes(api, rack):
    """Every way in (the node selection endpoint, the bulk bar, the drift reimage) checks
    for an empty selection; start_bulk_action refuses one itself, before writing."""
    resp = api("technician").post("/api/v1/nodes/actions/power_on/", {"nodes": []}, "json")
    assert resp.status_code == 400 and "nodes" in resp.data
    with pytest.raises(ValidationError) as refused:
        start_bulk_action([], "inspect", actor="user:t")
    assert refused.value.message_dict == {"nodes": ["No nodes given: 'Inspect' was not started."]}
    assert not Operation.objects.exists()
