"""History cannot be erased: only a node enrolled by mistake (no history) can be deleted.

A node that has lifecycle events, operations, deployments or gate runs is decommissioned
instead, which keeps everything; deleting it would cascade that evidence away.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db.models import ProtectedError

from inventory import services
from inventory.locking import acquire
from inventory.models import LifecycleEvent, Node, Operation
from tests.factories import (
    DeploymentFactory,
    GateRunFactory,
    LifecycleEventFactory,
    NodeFactory,
    OperationFactory,
)


@pytest.mark.django_db
def test_a_mistaken_enrolment_can_be_deleted(api, node):
    resp = api("admin").delete(f"/api/v1/nodes/{node.pk}/")
    assert resp.status_code == 204, resp.content
    assert not Node.objects.filter(pk=node.pk).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["in_service", "draining", "failed"])
def test_a_node_with_lifecycle_history_is_refused_and_kept(api, node, state):
    LifecycleEventFactory(node=node, from_state="enrolled", to_state=state)
    events = LifecycleEvent.objects.filter(node=node).count()
    resp = api("admin").delete(f"/api/v1/nodes/{node.pk}/")
    assert resp.status_code == 409, resp.content
    assert "decommission" in resp.data["detail"]
    assert "1 lifecycle event" in resp.data["detail"]
    assert Node.objects.filter(pk=node.pk).exists()
    assert LifecycleEvent.objects.filter(node=node).count() == events


@pytest.mark.django_db
def test_a_locked_node_mid_operation_is_refused_and_keeps_its_operation(api, node):
    op = OperationFactory(node=node, kind="inspect", status="running")
    acquire(node, "operation", op)
    resp = api("admin").delete(f"/api/v1/nodes/{node.pk}/")
    assert resp.status_code == 409, resp.content
    assert "1 operation" in resp.data["detail"]
    assert Operation.objects.filter(pk=op.pk).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("evidence", [DeploymentFactory, GateRunFactory], ids=["deploy", "gate"])
def test_deployments_and_gate_evidence_are_kept(api, evidence):
    node = NodeFactory()
    evidence(node=node)
    resp = api("admin").delete(f"/api/v1/nodes/{node.pk}/")
    assert resp.status_code == 409, resp.content
    assert Node.objects.filter(pk=node.pk).exists()


@pytest.mark.django_db
def test_history_rows_are_protected_in_the_database_too(node):
    """Code that deletes a node around the service still cannot take its history along."""
    LifecycleEventFactory(node=node, from_state="enrolled", to_state="inspecting")
    with pytest.raises(ProtectedError):
        Node.objects.filter(pk=node.pk).delete()
    OperationFactory(node=NodeFactory(), kind="inspect")
    with pytest.raises(ProtectedError):
        Node.objects.filter(operations__isnull=False).delete()


@pytest.mark.django_db
def test_the_service_names_what_to_do_instead(node):
    LifecycleEventFactory(node=node, from_state="enrolled", to_state="inspecting")
    OperationFactory(node=node, kind="inspect")
    with pytest.raises(services.DeleteRefused) as err:
        services.delete_node(node)
    assert str(err.value) == (
        f"{node.hostname} has history (1 lifecycle event, 1 operation): decommission it "
        "instead, which keeps its history. Only a node enrolled by mistake, with no "
        "history, can be deleted."
    )


@pytest.mark.django_db
def test_the_admin_offers_delete_only_without_history(client, node):
    client.force_login(User.objects.create_superuser("root", password="x"))
    assert client.get(f"/admin/inventory/node/{node.pk}/delete/").status_code == 200
    LifecycleEventFactory(node=node, from_state="enrolled", to_state="inspecting")
    assert client.get(f"/admin/inventory/node/{node.pk}/delete/").status_code == 403
    assert client.post(f"/admin/inventory/node/{node.pk}/delete/", {"post": "yes"}).status_code in (
        403,
    )
    assert Node.objects.filter(pk=node.pk).exists()
