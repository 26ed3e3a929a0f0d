"""A node that cannot take a bulk action in its state is skipped, not failed: the bulk
reports it, but it is no failure of that node (its history) nor of the bulk."""

import pytest

from inventory.models import Node, Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def test_illegal_node_is_skipped_and_the_bulk_succeeds(api, rack):
    drained = [NodeFactory(rack=rack, state="drained") for _ in range(2)]
    serving = NodeFactory(rack=rack, state="in_service")  # rma is not legal in service
    resp = api("technician").post(
        "/api/v1/nodes/actions/rma/",
        {"nodes": [n.pk for n in (*drained, serving)], "reason": "hall closed"},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    assert resp.data["status"] == "succeeded"
    assert resp.data["message"] == "2 succeeded, 1 skipped"
    skipped = Operation.objects.get(parent_id=resp.data["id"], node=serving)
    assert skipped.status == "skipped"
    assert "in_service" in skipped.error and "not allowed in that state" in skipped.error
    assert Node.objects.get(pk=serving.pk).state == "in_service"
    assert not Operation.objects.filter(node=serving, status="failed").exists()


def test_skipped_oob_child_and_failures_counted_apart(api, rack):
    """Power and boot are batched: a decommissioned node is skipped there too; the
    parent still fails when a node that could take the action did not."""
    from inventory import operations

    live = [NodeFactory(rack=rack) for _ in range(2)]
    gone = NodeFactory(rack=rack, state="decommissioned")
    resp = api("technician").post(
        "/api/v1/nodes/actions/boot_pxe/",
        {"nodes": [n.pk for n in (*live, gone)]},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    parent = Operation.objects.get(pk=resp.data["id"])
    assert parent.children.get(node=gone).status == "skipped"
    assert parent.status == "running"
    first, second = parent.children.filter(node__in=live).order_by("pk")
    Operation.objects.filter(pk=first.pk).update(status="succeeded")
    Operation.objects.filter(pk=second.pk).update(status="failed", error="BMC said no")
    operations.refresh_parent(parent.pk)
    parent.refresh_from_db()
    assert parent.status == "failed"
    assert parent.error == "1 of 2 nodes failed"
    assert parent.message == "1 succeeded, 1 failed, 1 skipped"


def test_every_node_skipped_is_a_succeeded_bulk_saying_so(api, rack):
    node = NodeFactory(rack=rack, state="in_service")
    resp = api("technician").post(
        "/api/v1/nodes/actions/inspect/", {"nodes": [node.pk]}, format="json"
    )
    assert resp.data["status"] == "succeeded"
    assert resp.data["message"] == "0 succeeded, 1 skipped"


@pytest.mark.slow  # 7 s on its own (docs/testing.md: Markers)
def test_operation_status_enum_in_the_schema_lists_skipped(api):
    schema = api("manager").get("/api/schema/?format=json")
    assert schema.status_code == 200
    enums = [
        s["enum"]
        for s in schema.json()["components"]["schemas"].values()
        if "succeeded" in s.get("enum", []) and "cancelled" in s.get("enum", [])
    ]
    assert enums and all("skipped" in e for e in enums)


def test_node_history_shows_a_skip_as_such_not_as_a_failure(api, client, users, rack):
    serving = NodeFactory(rack=rack, state="in_service")
    api("technician").post("/api/v1/nodes/actions/inspect/", {"nodes": [serving.pk]}, format="json")
    client.force_login(users["technician"])
    html = client.get(serving.get_absolute_url()).content.decode()
    assert '<span class="badge text-bg-light">skipped</span>' in html
    assert '<td class="text-danger">' not in html


def test_a_bulk_is_not_done_before_every_node_has_its_child(rack):
    """A fast worker ended the first child before the request had created the others: the
    parent ended "1 succeeded" of 5 (seen in a browser test under load)."""
    from inventory import operations

    nodes = [NodeFactory(rack=rack) for _ in range(3)]
    parent = Operation.objects.create(
        kind="bulk_drain", actor="user:a", status="running", params={"nodes": [n.pk for n in nodes]}
    )
    Operation.objects.create(
        kind="drain", node=nodes[0], parent=parent, actor="user:a", status="succeeded"
    )
    operations.refresh_parent(parent.pk)  # the first child ended; two are still to come
    parent.refresh_from_db()
    assert parent.status == "running" and parent.progress == 33
    for node, status in ((nodes[1], "succeeded"), (nodes[2], "skipped")):
        Operation.objects.create(
            kind="drain", node=node, parent=parent, actor="user:a", status=status
        )
    operations.refresh_parent(parent.pk)  # as the bulk does once all are created
    parent.refresh_from_db()
    assert (parent.status, parent.message) == ("succeeded", "2 succeeded, 1 skipped")
