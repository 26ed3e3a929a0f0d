"""`Idempotency-Key` on the inventory API's writes, as a ticketing system retries them: a
node action, a bulk or rack action, an enrolment, an import and a cancel sent twice start
one operation and are answered twice alike (the mechanism itself: core.idempotency, tested
on RMA cases in tests/rma/test_api.py)."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections
from django.test.client import encode_multipart
from rest_framework.test import APIClient

from devtools.bench_import import synthetic_csv
from inventory.models import Node, Operation
from rma.models import Case
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.inventory.test_api import node_payload

pytestmark = pytest.mark.django_db


def rma(client, node, reason="XID 79 on GPU 3", key="INC-7-rma"):
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(f"/api/v1/nodes/{node.pk}/actions/rma/", {"reason": reason}, "json", **extra)


def test_a_retried_rma_action_is_answered_as_the_first_and_opens_one_case(api):
    node = NodeFactory(state="failed")
    client = api("integration")
    first = rma(client, node)
    again = rma(client, node)
    assert first.status_code == again.status_code == 202, again.content  # not a 409
    assert again.data == first.data and again["Idempotent-Replayed"] == "true"
    assert Operation.objects.filter(node=node, kind="rma").count() == 1
    assert Case.objects.filter(node=node).count() == 1
    assert Node.objects.get(pk=node.pk).state == "rma"


def test_without_a_key_a_retried_action_is_still_refused(api):
    node = NodeFactory(state="failed")
    client = api("integration")
    assert rma(client, node, key=None).status_code == 202
    again = rma(client, node, key=None)
    assert again.status_code == 409 and again.data["state"] == "rma"


def test_the_same_key_for_another_body_or_node_is_refused_and_starts_nothing(api):
    node, other = NodeFactory(state="failed"), NodeFactory(state="failed")
    client = api("integration")
    assert rma(client, node).status_code == 202
    for resp in (rma(client, node, reason="PSU"), rma(client, other)):
        assert resp.status_code == 422 and "different request" in resp.data["detail"]
    assert Operation.objects.filter(kind="rma").count() == 1
    assert Node.objects.get(pk=other.pk).state == "failed"


def test_another_caller_with_the_same_key_is_not_given_the_first_answer(api):
    node = NodeFactory(state="failed")
    assert rma(api("integration"), node).status_code == 202
    theirs = rma(api("technician"), node)
    assert theirs.status_code == 409 and not theirs.has_header("Idempotent-Replayed")
    assert Operation.objects.filter(node=node, kind="rma").count() == 1


def test_a_refused_action_does_not_burn_its_key(api):
    node = NodeFactory(state="failed")
    client = api("integration")
    assert rma(client, node, reason="").status_code == 400  # RMA needs a reason
    fixed = rma(client, node, reason="XID 79")
    assert fixed.status_code == 202 and "Idempotent-Replayed" not in fixed


def test_bulk_and_rack_actions_sent_twice_make_one_aggregate_operation(api, rack):
    nodes = [NodeFactory(rack=rack, state="drained") for _ in range(2)]
    client = api("technician")
    body = {"nodes": [n.pk for n in nodes], "reason": "hall closed"}
    sent = [
        client.post("/api/v1/nodes/actions/rma/", body, "json", HTTP_IDEMPOTENCY_KEY="b1")
        for _ in range(2)
    ]
    assert sent[0].status_code == sent[1].status_code == 202
    assert sent[1].data == sent[0].data and sent[1]["Idempotent-Replayed"] == "true"
    url = f"/api/v1/racks/{rack.pk}/actions/decommission/"
    sent = [
        client.post(url, {"reason": "hall closed"}, "json", HTTP_IDEMPOTENCY_KEY="r1")
        for _ in range(2)
    ]
    assert sent[0].status_code == sent[1].status_code == 202
    assert sent[1].data == sent[0].data
    assert Operation.objects.filter(kind="bulk_rma").count() == 1
    assert Operation.objects.filter(kind="bulk_decommission").count() == 1
    assert Operation.objects.filter(kind="decommission", parent__isnull=False).count() == 2


def test_an_enrolment_sent_twice_enrols_one_node_and_answers_201_twice(api, rack):
    client = api("integration")
    sent = [
        client.post("/api/v1/nodes/", node_payload(rack), "json", HTTP_IDEMPOTENCY_KEY="sn1")
        for _ in range(2)
    ]
    assert sent[0].status_code == sent[1].status_code == 201, sent[1].content
    assert sent[1].data == sent[0].data  # not a 400 "serial already exists"
    assert Node.objects.filter(serial="SN1").count() == 1


def test_an_import_retried_with_a_new_multipart_boundary_is_answered_with_its_operation(api):
    """A client that builds the upload again for its retry sends other bytes (boundary),
    the same form: that is the same request."""
    RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r000")
    client = api("integration")
    text = synthetic_csv("dc1", 3)
    sent = []
    for boundary in ("first-try", "second-try"):
        form = {"file": SimpleUploadedFile("nodes.csv", text.encode(), "text/csv")}
        sent.append(
            client.generic(
                "POST",
                "/api/v1/nodes/import/",
                encode_multipart(boundary, form),
                f"multipart/form-data; boundary={boundary}",
                HTTP_IDEMPOTENCY_KEY="import-1",
            )
        )
    first, again = (resp.json() for resp in sent)
    assert sent[0].status_code == sent[1].status_code == 202, sent[1].content
    assert first["status"] == "succeeded" and again == first
    assert sent[1]["Location"] == sent[0]["Location"]  # where to poll, replayed too
    assert Operation.objects.filter(kind="import_nodes").count() == 1
    assert Node.objects.count() == 3
    other = SimpleUploadedFile("nodes.csv", synthetic_csv("dc1", 2).encode())
    resp = client.post(
        "/api/v1/nodes/import/",
        {"file": other},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY="import-1",
    )
    assert resp.status_code == 422


def test_the_schema_declares_the_key_and_its_422_on_these_writes(api):
    schema = api("manager").get("/api/schema/?format=json").json()
    writes = [
        ("/api/v1/nodes/{id}/actions/{name}/", "post"),
        ("/api/v1/nodes/actions/{name}/", "post"),
        ("/api/v1/racks/{id}/actions/{name}/", "post"),
        ("/api/v1/nodes/", "post"),
        ("/api/v1/nodes/import/", "post"),
        ("/api/v1/racks/", "post"),
        ("/api/v1/sites/", "post"),
        ("/api/v1/interfaces/", "post"),
        ("/api/v1/operations/{id}/cancel/", "post"),
        ("/api/v1/rma-cases/{id}/transitions/{name}/", "post"),
    ]
    for path, method in writes:
        operation = schema["paths"][path][method]
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert "Idempotency-Key" in headers, path
        assert "422" in operation["responses"], path
    unkeyed = schema["paths"]["/api/v1/nodes/{id}/"]["delete"]
    assert "422" not in unkeyed["responses"]


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_an_action_sent_four_times_at_once_with_one_key_starts_once(api, users):
    """Retries that overlap the first try: each waits on the key, then gets its answer."""
    node = NodeFactory(state="failed")
    token = api("integration")._credentials["HTTP_AUTHORIZATION"]

    def send(_):
        try:
            return rma(APIClient(HTTP_AUTHORIZATION=token), node, key="race-1")
        finally:
            connections.close_all()

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(send, range(4)))
    assert [resp.status_code for resp in answers] == [202] * 4
    assert len({resp.data["id"] for resp in answers}) == 1
    assert Operation.objects.filter(node=node, kind="rma").count() == 1
    assert Case.objects.filter(node=node).count() == 1
