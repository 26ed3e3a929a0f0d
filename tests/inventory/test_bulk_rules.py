"""A bulk action applies the same rules per node as the single action: a reason where one
is needed, an RMA case opened or closed. (Before, bulk `rma` moved nodes without a reason
or a case, and bulk `repaired` left their cases open.)"""

import pytest

from inventory.models import LifecycleEvent, Node, Operation
from rma.models import Case as RMACase
from rma.models import CaseEvent
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def nodes_in(rack, *states):
    return [NodeFactory(rack=rack, state=state) for state in states]


def bulk(api, name, nodes, **body):
    return api("technician").post(
        f"/api/v1/nodes/actions/{name}/", {"nodes": [n.pk for n in nodes], **body}, format="json"
    )


@pytest.mark.parametrize("name", ["rma", "decommission"])
@pytest.mark.parametrize("reason", [None, "", "   "])
def test_bulk_action_that_needs_a_reason_is_a_400_without_one(api, rack, name, reason):
    nodes = nodes_in(rack, "failed", "drained")
    body = {} if reason is None else {"reason": reason}
    resp = bulk(api, name, nodes, **body)
    assert resp.status_code == 400, resp.content
    assert "needs a reason" in str(resp.data["reason"])
    assert not Operation.objects.exists() and not RMACase.objects.exists()
    assert set(Node.objects.values_list("state", flat=True)) == {"failed", "drained"}


def test_bulk_rma_opens_a_case_per_node_with_the_reason(api, rack):
    failed, drained, serving = nodes_in(rack, "failed", "drained", "in_service")
    resp = bulk(api, "rma", [failed, drained, serving], reason="PSU fans dead in row 4")
    assert resp.status_code == 202, resp.content
    parent = Operation.objects.get(pk=resp.data["id"])
    assert parent.status == "succeeded" and parent.message == "2 succeeded, 1 skipped"
    assert parent.params["reason"] == "PSU fans dead in row 4"
    states = dict(Node.objects.values_list("pk", "state"))
    assert states == {failed.pk: "rma", drained.pk: "rma", serving.pk: "in_service"}
    cases = RMACase.objects.filter(status="open")
    assert sorted(c.node_id for c in cases) == sorted([failed.pk, drained.pk])
    assert {(c.reason, c.opened_by) for c in cases} == {
        ("PSU fans dead in row 4", "token:technician-user")
    }
    refused = parent.children.get(node=serving)
    assert refused.status == "skipped" and "not allowed in that state" in refused.error
    event = LifecycleEvent.objects.get(node=failed, to_state="rma")
    assert event.reason == "PSU fans dead in row 4" and event.operation.parent_id == parent.pk


def test_bulk_repaired_closes_the_cases_and_reinspects(api, rack):
    nodes = nodes_in(rack, "failed", "failed")
    bulk(api, "rma", nodes, reason="GPU 3 fell off the bus")
    resp = bulk(api, "repaired", nodes, reason="GPU 3 replaced")
    assert resp.status_code == 202, resp.content
    assert set(Node.objects.values_list("state", flat=True)) == {"inspecting"}
    assert not RMACase.objects.filter(status="open").exists()
    assert set(RMACase.objects.values_list("resolution", flat=True)) == {"repaired"}
    closing = CaseEvent.objects.filter(to_status="closed")
    assert closing.count() == 2 and all("GPU 3 replaced" in e.note for e in closing)
    children = Operation.objects.get(pk=resp.data["id"]).children.all()
    assert {c.kind for c in children} == {"repaired"}
    assert all(c.task_id for c in children)  # the inspection was sent for each


def test_single_and_bulk_rma_write_the_same_records(api, rack):
    one, two = nodes_in(rack, "failed", "failed")
    single = api("technician").post(
        f"/api/v1/nodes/{one.pk}/actions/rma/", {"reason": "XID 79"}, format="json"
    )
    assert single.status_code == 202
    assert bulk(api, "rma", [two], reason="XID 79").status_code == 202

    def record(node):
        case = RMACase.objects.get(node=node)
        event = LifecycleEvent.objects.get(node=node, to_state="rma")
        op = event.operation
        return (case.status, case.reason, event.event, event.reason, op.kind, op.status)

    assert record(one) == record(two)
