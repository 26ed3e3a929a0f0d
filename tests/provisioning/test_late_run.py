"""A task that arrives after its operation ended lets go of the node it took.

Found by bench-converge (1,000 nodes): the beat's drain re-check found a node drained and
ended its drain while the drain's own task, queued behind hundreds of others, was taking
the node. The task then saw its operation ended and stopped, still holding the node: the
converge flow's next step waited for the stale-lock sweep, 70 to 100 s instead of none.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from drift import baselines
from inventory import services
from inventory.locking import acquire, holder_of
from inventory.models import Node
from provisioning import draining
from provisioning.runner import load_operation, run_claimed
from provisioning.schedulers.base import DrainStatus
from provisioning.tasks import drain_node
from tests.factories import NodeFactory, RackFactory, SiteFactory

# The flow's hooks run after commits, as in a worker.
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_drain_task_later_than_the_recheck_frees_the_node_and_the_flow_goes_on():
    site = SiteFactory(slug="dc9")  # a queue no test worker reads: nothing runs by itself
    node = NodeFactory(state="in_service", model="FX-1", rack=RackFactory(site=site))
    baselines.save(
        {"name": "fx", "node_model": "FX-1", "components": {"firmware.BMC": "1.52.00"}},
        "user:admin",
    )
    flow = services.start_action(node, "converge", actor="user:alice", reason="BMC 1.52")
    drain = flow.children.get(kind="drain")
    op = load_operation(drain.pk)  # its task has read it, still pending

    with transaction.atomic():
        # The re-check ends the drain; before the flow hears of it (after this commit),
        # the drain's task takes the node, as its first step does.
        assert draining.complete_drain(Node.objects.get(pk=node.pk), DrainStatus(drained=True))
        acquire(Node.objects.get(pk=node.pk), holder_of(op), op=op)
    assert not flow.children.filter(kind="apply_firmware").exists()  # the node was held

    assert run_claimed(drain_node, op, Node.objects.get(pk=node.pk), draining.drain) == "skipped"

    step = flow.children.get(kind="apply_firmware")
    node.refresh_from_db()
    assert node.lock_operation_id == step.pk  # the next step holds it, at once
    drain.refresh_from_db()
    assert drain.status == "succeeded"
