"""Reading the trail: the API's filters, its errors, the audit page and the object panels."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from tests.factories import NodeFactory, RackFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/audit-log/"


@pytest.fixture
def history(api, users):
    """Two nodes made two hours ago; one renamed over the API by the integration token an
    hour ago, then its model changed by the admin's token now."""
    now = timezone.now()
    with time_machine.travel(now - timedelta(hours=2), tick=False):
        first, second = NodeFactory(), NodeFactory()
    with time_machine.travel(now - timedelta(hours=1), tick=False):
        api("integration").patch(f"/api/v1/nodes/{first.pk}/", {"hostname": "gpu-x"}, format="json")
    api("admin").patch(f"/api/v1/nodes/{first.pk}/", {"model": "HGX B200"}, format="json")
    return first, second


def changes(resp) -> list[dict]:
    assert resp.status_code == 200, resp.content
    return [row["changes"] for row in resp.data["results"]]


def test_filters_by_model_object_actor_and_since(api, users, history):
    first, second = history
    client = api("admin")
    by_object = client.get(URL, {"model": "inventory.node", "object_id": first.pk})
    assert changes(by_object)[:2] == [
        {"model": ["HGX H100 8-GPU", "HGX B200"]},  # newest first
        {"hostname": [first.hostname, "gpu-x"]},
    ]
    assert [r["object_id"] for r in by_object.data["results"]] == [str(first.pk)] * 3
    short = client.get(URL, {"model": "node", "object_id": first.pk})
    assert short.data["count"] == by_object.data["count"] == 3  # 2 updates + the create
    by_actor = client.get(URL, {"actor": users["integration"].username})
    assert changes(by_actor) == [{"hostname": [first.hostname, "gpu-x"]}]
    assert client.get(URL, {"actor": "token:" + users["admin"].username}).data["count"] == 1
    recent = client.get(URL, {"since": (timezone.now() - timedelta(minutes=5)).isoformat()})
    assert {"model": ["HGX H100 8-GPU", "HGX B200"]} in changes(recent)
    assert {"hostname": [first.hostname, "gpu-x"]} not in changes(recent)
    other = client.get(URL, {"model": "node", "object_id": second.pk})
    assert [r["action"] for r in other.data["results"]] == ["create"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"model": "inventory.nothing"}, "model"),
        ({"object_id": "abc"}, "object_id"),
        ({"action": "explode"}, "action"),
    ],
)
def test_bad_filters_are_a_400_naming_the_filter(api, params, field):
    resp = api("admin").get(URL, params)
    assert resp.status_code == 400, resp.content
    assert field in resp.data


def test_only_admins_read_the_trail(api):
    for role in ("manager", "technician", "integration"):
        assert api(role).get(URL).status_code == 403
    assert api(None).get(URL).status_code == 401


def test_node_page_shows_its_changes_panel(client, users, history):
    first, _ = history
    client.force_login(users["admin"])
    page = client.get(reverse("inventory:node_detail", args=[first.pk])).content.decode()
    panel_url = reverse("audit:changes", args=["inventory.node", first.pk])
    assert f'hx-get="{panel_url}"' in page
    panel = client.get(panel_url).content.decode()
    assert "gpu-x" in panel and "HGX B200" in panel and f"token:{users['admin'].username}" in panel
    more = f"{reverse('audit:entry_list')}?model=inventory.node&amp;object_id={first.pk}"
    assert more in panel


def test_panel_and_page_are_for_admins_only(client, users, node):
    client.force_login(users["technician"])
    page = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    assert "changes-panel-slot" not in page
    assert client.get(reverse("audit:changes", args=["inventory.node", node.pk])).status_code == 403
    assert client.get(reverse("audit:entry_list")).status_code == 403


def test_rack_page_panel_and_audit_page_filters(client, users):
    rack = RackFactory(name="r-panel")
    client.force_login(users["admin"])
    page = client.get(reverse("inventory:rack_detail", args=[rack.pk])).content.decode()
    assert reverse("audit:changes", args=["inventory.rack", rack.pk]) in page
    listing = client.get(reverse("audit:entry_list"), {"model": "rack", "object_id": rack.pk})
    assert listing.status_code == 200 and "r-panel" in listing.content.decode()
    bad = client.get(reverse("audit:entry_list"), {"since": "soon"})
    assert bad.status_code == 400 and "Enter a valid date/time." in bad.content.decode()
