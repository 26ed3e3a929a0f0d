"""A bulk power or boot action sends its children's messages at once and records them in a
few statements (engine/outbox.py, `send_many`); a broker lost midway loses none of them."""

from dataclasses import replace

import pytest
from kombu.exceptions import OperationalError

from inventory import operations
from inventory.models import Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db

PLACEHOLDERS = ("", operations.QUEUED, operations.UNSENT, operations.DEFERRED)


def test_each_child_of_a_bulk_pxe_boot_is_sent_with_its_own_task(
    api, rack, django_capture_on_commit_callbacks
):
    nodes = [NodeFactory(rack=rack) for _ in range(5)]
    with django_capture_on_commit_callbacks(execute=True):
        resp = api("technician").post(
            "/api/v1/nodes/actions/boot_pxe/", {"nodes": [n.pk for n in nodes]}, format="json"
        )
    assert resp.status_code == 202, resp.content
    children = Operation.objects.filter(parent_id=resp.data["id"])
    sent = list(children.values_list("task_id", "task_name", "sent"))
    assert len(sent) == 5
    assert all(task_id not in PLACEHOLDERS and when is not None for task_id, _, when in sent)
    assert len({task_id for task_id, _, _ in sent}) == 5
    assert {name for _, name, _ in sent} == {"provisioning.tasks.set_boot_device"}


def test_a_broker_lost_midway_leaves_the_rest_unsent_and_the_sweep_sends_them(rack):
    children = [
        Operation.objects.create(
            kind="power_cycle", node=NodeFactory(rack=rack), actor="t", task_id=operations.QUEUED
        )
        for _ in range(4)
    ]
    tried = []

    def broker_dies_after_two(op):
        tried.append(op.pk)
        if len(tried) > 2:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return operations.OUTBOX.publish(op)

    outbox = replace(operations.OUTBOX, publish=broker_dies_after_two)
    for op in children:
        op.task_name = "provisioning.tasks.power_node"
    assert outbox.send_many(children, also={"task_name": "provisioning.tasks.power_node"}) == 2
    assert len(tried) == 3  # not one more try per row of a broker that is down
    rows = {op.pk: op for op in Operation.objects.filter(pk__in=[c.pk for c in children])}
    first, second, third, fourth = (rows[c.pk] for c in children)
    assert first.task_id not in PLACEHOLDERS and second.task_id not in PLACEHOLDERS
    assert (third.task_id, fourth.task_id) == (operations.UNSENT, operations.UNSENT)
    assert "waiting for the message broker" in fourth.message

    assert operations.republish() == 2
    for pk in (third.pk, fourth.pk):
        assert Operation.objects.get(pk=pk).task_id not in PLACEHOLDERS
