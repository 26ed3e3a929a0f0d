"""Operations are the outbox of work: what was accepted but never reached the broker is
sent by the beat's republish sweep, and nothing else is."""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory import operations
from inventory.models import Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def pending(node, task_id: str, age_s: float, task_name="provisioning.tasks.power_node"):
    op = Operation.objects.create(
        kind="power_on", node=node, actor="t", task_id=task_id, task_name=task_name
    )
    Operation.objects.filter(pk=op.pk).update(created=timezone.now() - timedelta(seconds=age_s))
    return op


def test_republish_sends_unsent_and_stranded_operations_only(rack):
    node = NodeFactory(rack=rack)
    unsent = pending(node, operations.UNSENT, age_s=1)
    stranded = pending(node, operations.QUEUED, age_s=120)  # sender died after its commit
    in_flight = pending(node, operations.QUEUED, age_s=1)  # its sender is about to send
    waiting_slot = pending(node, "", age_s=120)  # a staggered child waiting for its turn
    sent_already = pending(node, "c0ffee-task-id", age_s=120)
    nameless = pending(node, operations.UNSENT, age_s=1, task_name="")

    assert operations.republish(older_than=30) == 2
    ids = dict(Operation.objects.values_list("pk", "task_id"))
    for op in (unsent, stranded):
        assert ids[op.pk] not in ("", operations.UNSENT, operations.QUEUED)  # a real id
    assert ids[in_flight.pk] == operations.QUEUED
    assert ids[waiting_slot.pk] == ""
    assert ids[sent_already.pk] == "c0ffee-task-id"
    assert ids[nameless.pk] == operations.UNSENT


def test_a_pending_operation_sent_long_ago_and_never_started_is_sent_again(rack):
    """Its message may have gone with a Redis restarted empty: without a resend it waited
    for its deadline. A running or recently sent one is left alone."""
    node = NodeFactory(rack=rack)
    old = timezone.now() - timedelta(seconds=300)
    lost = pending(node, "lost-task-id", age_s=300)
    recent = pending(node, "recent-task-id", age_s=300)
    running = pending(node, "running-task-id", age_s=300)
    Operation.objects.filter(pk__in=[lost.pk, running.pk]).update(sent=old)
    Operation.objects.filter(pk=recent.pk).update(sent=timezone.now())
    Operation.objects.filter(pk=running.pk).update(status="running")

    assert operations.republish(resend_after=120) == 1
    ids = dict(Operation.objects.values_list("pk", "task_id"))
    assert ids[lost.pk] not in ("lost-task-id", operations.UNSENT, operations.QUEUED)
    assert Operation.objects.get(pk=lost.pk).sent > old
    assert ids[recent.pk] == "recent-task-id"
    assert ids[running.pk] == "running-task-id"
