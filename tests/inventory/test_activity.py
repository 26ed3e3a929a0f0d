"""The Activity page and the overview's running/failed panels: what a shift lead checks in
the morning, and the same filters through the API."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from inventory.models import LifecycleEvent, Operation
from tests.factories import (
    LifecycleEventFactory,
    NodeFactory,
    OperationFactory,
    RackFactory,
    SiteFactory,
)

URL = "/activity/"


def at(obj, **ago):
    """Move a row's creation time back (auto_now_add sets it to now)."""
    type(obj).objects.filter(pk=obj.pk).update(created=timezone.now() - timedelta(**ago))
    return obj


@pytest.fixture
def night(node):
    """What ran overnight: a failed recycle with its reason, a bulk power-on of a rack in
    another site with children, an event, and a week-old operation."""
    other = RackFactory(site=SiteFactory(slug="dc2", name="DC two"), name="r09")
    far = NodeFactory(rack=other, rack_unit=1, u_height=4, hostname="gpu-far")
    start = timezone.now() - timedelta(hours=3)
    failed = at(
        OperationFactory(
            node=node,
            kind="recycle",
            status="failed",
            actor="user:tina",
            error="gate nccl-allreduce failed: bus bandwidth 310 GB/s < 380",
            started=start,
            finished=start + timedelta(minutes=42, seconds=5),
        ),
        hours=3,
    )
    parent = at(
        OperationFactory(node=None, rack=other, kind="bulk_power_on", status="running"),
        hours=2,
    )
    for status in ("succeeded", "succeeded", "failed"):
        at(OperationFactory(node=far, parent=parent, kind="power_on", status=status), hours=2)
    event = at(
        LifecycleEventFactory(
            node=node, event="drain", from_state="in_service", to_state="draining", actor="system"
        ),
        hours=1,
    )
    old = at(OperationFactory(node=node, kind="inspect", actor="user:bob"), days=8)
    return {"failed": failed, "parent": parent, "event": event, "old": old, "far": far}


def rows(resp) -> str:
    return resp.content.decode()


@pytest.mark.django_db
def test_activity_shows_what_ran_with_status_reason_duration_and_children(client, users, night):
    client.force_login(users["manager"])
    resp = client.get(URL)
    assert resp.status_code == 200
    html = rows(resp)
    assert 'id="nav-activity"' in html
    # The kind field suggests the actions' kinds, their bulk forms and their events, each
    # with the words people know it by.
    for kind, label in (
        ("recycle", "Recycle"),
        ("bulk_power_on", "Power on (bulk)"),
        ("import_nodes", "Import nodes"),
        ("repaired", "Mark repaired"),
    ):
        assert f'<option value="{kind}" label="{label}">' in html
    assert "gate nccl-allreduce failed: bus bandwidth 310 GB/s &lt; 380" in html
    assert "42 min 5 s" in html
    # The bulk parent's children by status, and a link to its rack.
    assert "3 nodes:" in html and "2 ok" in html and "1 failed" in html
    assert reverse("inventory:rack_detail", args=[night["parent"].rack_id]) in html
    assert night["failed"].node.get_absolute_url() in html
    # 5 operations from the night, the event and the week-old operation.
    assert f'data-row="event-{night["event"].pk}"' in html
    assert "7 entries" in html
    # Newest first.
    assert html.index(f'data-row="event-{night["event"].pk}"') < html.index(
        f'data-row="op-{night["failed"].pk}"'
    )
    assert html.index(f'data-row="op-{night["failed"].pk}"') < html.index(
        f'data-row="op-{night["old"].pk}"'
    )
    # Times carry their zone, relative with the absolute one in the title.
    assert ' UTC">3 h 0 min ago</time>' in html


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "expected", "absent"),
    [
        ("status=failed", ["op-failed"], ["event", "op-old", "op-parent"]),
        ("status=failed&status=running", ["op-failed", "op-parent"], ["event", "op-old"]),
        ("site=dc2", ["op-parent"], ["op-failed", "event", "op-old"]),
        ("actor=tina", ["op-failed"], ["op-parent", "event", "op-old"]),
        ("kind=drain", ["event"], ["op-failed", "op-old"]),
        ("last=24h", ["op-failed", "event"], ["op-old"]),
        ("show=events", ["event"], ["op-failed", "op-old"]),
        ("show=operations&last=7d", ["op-failed", "op-parent"], ["event", "op-old"]),
    ],
)
def test_activity_filters(client, users, night, query, expected, absent):
    client.force_login(users["technician"])
    ids = {
        "op-failed": f'data-row="op-{night["failed"].pk}"',
        "op-parent": f'data-row="op-{night["parent"].pk}"',
        "op-old": f'data-row="op-{night["old"].pk}"',
        "event": f'data-row="event-{night["event"].pk}"',
    }
    html = rows(client.get(f"{URL}?{query}"))
    for key in expected:
        assert ids[key] in html, (query, key)
    for key in absent:
        assert ids[key] not in html, (query, key)


@pytest.mark.django_db
def test_activity_since_until_and_a_bad_time(client, users, night):
    client.force_login(users["technician"])
    now = timezone.now()
    since = (now - timedelta(hours=2, minutes=30)).strftime("%Y-%m-%dT%H:%M")
    until = (now - timedelta(hours=1, minutes=30)).strftime("%Y-%m-%dT%H:%M")
    html = rows(client.get(f"{URL}?since={since}&until={until}"))
    assert f'data-row="op-{night["parent"].pk}"' in html
    assert f'data-row="op-{night["failed"].pk}"' not in html
    assert f'data-row="event-{night["event"].pk}"' not in html
    html = rows(client.get(f"{URL}?since=yesterday"))
    assert "since: Enter a valid date/time." in html


@pytest.mark.django_db
def test_activity_htmx_swaps_only_the_table(client, users, night):
    client.force_login(users["technician"])
    html = rows(client.get(f"{URL}?status=failed", HTTP_HX_REQUEST="true"))
    assert html.lstrip().startswith('<div id="activity-table">')
    assert '<nav class="navbar' not in html


@pytest.mark.django_db
def test_activity_needs_a_login(client):
    assert client.get(URL).status_code == 302


@pytest.mark.django_db
def test_activity_pages_and_query_count_does_not_grow(client, users, node):
    client.force_login(users["technician"])
    rack = node.rack

    def grow(n):
        for _ in range(n):
            parent = OperationFactory(node=None, rack=rack, kind="bulk_inspect")
            OperationFactory(node=node, parent=parent, kind="inspect", status="failed", error="x")
            LifecycleEventFactory(node=node)

    def count(url):
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    grow(3)
    small = count(URL)
    grow(40)
    assert Operation.objects.count() + LifecycleEvent.objects.count() == 129
    large = count(URL)
    assert small == large
    html = rows(client.get(URL))
    assert "Page 1 of 3" in html and "older" in html
    assert html.count('data-row="') == 50
    last = rows(client.get(f"{URL}?page=3"))
    assert last.count('data-row="') == 29 and "newer" in last


@pytest.mark.django_db
def test_api_takes_the_same_filters(api, night):
    client = api("manager")
    got = client.get("/api/v1/operations/", {"site": "dc2", "status": ["failed", "running"]})
    assert got.status_code == 200, got.content
    ids = {row["id"] for row in got.json()["results"]}
    parent = night["parent"]
    failed_child = Operation.objects.get(parent=parent, status="failed")
    assert ids == {parent.pk, failed_child.pk}
    got = client.get("/api/v1/operations/", {"actor": "tina", "last": "24h"})
    assert [row["id"] for row in got.json()["results"]] == [night["failed"].pk]
    since = (timezone.now() - timedelta(hours=1, minutes=30)).isoformat()
    got = client.get("/api/v1/events/", {"site": "dc1", "since": since})
    assert [row["id"] for row in got.json()["results"]] == [night["event"].pk]
    got = client.get("/api/v1/events/", {"until": since, "site": "dc1"})
    assert got.json()["results"] == []
    assert client.get("/api/v1/operations/", {"last": "3d"}).status_code == 400
    # A site id, and what only looks like one, answer rather than fail.
    site_id = night["far"].rack.site_id
    got = client.get("/api/v1/operations/", {"site": str(site_id)})
    assert {row["id"] for row in got.json()["results"]} == {
        parent.pk,
        *parent.children.values_list("pk", flat=True),
    }
    for odd in ("99999999999999999999999", "\u00b2"):
        assert client.get("/api/v1/operations/", {"site": odd}).json()["results"] == []


@pytest.mark.django_db
def test_overview_shows_running_and_latest_failures_linking_to_activity(client, users, night):
    client.force_login(users["manager"])
    html = rows(client.get(reverse("fleet:overview")))
    assert 'id="running-now"' in html and 'id="latest-failures"' in html
    assert "bulk_power_on" in html
    assert "gate nccl-allreduce failed" in html
    assert f"{URL}?status=failed" in html
    assert f"{URL}?node={night['failed'].node_id}" in html
    assert f"{URL}?status=pending&amp;status=running" in html
