"""While a BMC runs an update (minutes on a real one), the step follows it for
CORRAL_CONVERGE_HOLD_SECONDS (1 s on the test worker), then lets go of its worker and is
run again each poll, holding its node: a thread held per update would leave a site's
worker no thread for anything else. Each update still has its limit."""

from __future__ import annotations

import pytest

from converge import firmware
from inventory import operations, services
from inventory.models import Operation
from provisioning.runner import Busy
from tests.converge.test_firmware_flow import artifact, node  # noqa: F401
from tests.peers.util import wait_until
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def slow(updating_bmc):
    updating_bmc.plan.polls = 10_000  # runs until the test lets it end
    artifact(updating_bmc, "BMC", "1.52.00", "immediate")
    artifact(updating_bmc, "GPU*", "96.00.A6.00.01", "reset", installs="GPU0")
    return updating_bmc


def test_a_running_update_holds_no_worker_and_lands_when_its_task_ends(
    api,
    slow,
    node,  # noqa: F811
    celery_worker,
):
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/apply_firmware/", {}, format="json"
    )
    op_id = resp.data["id"]
    asked: set = set()

    def between_polls() -> bool:
        op = Operation.objects.get(pk=op_id)
        assert not op.is_finished, op.error
        if "the BMC's task is Running" in op.message and op.worker == "":
            asked.add(op.sent)  # let go of its worker, its next run due
            assert op.attempts == 0 and op.status == "running"
        return len(asked) >= 3

    wait_until(between_polls, timeout=30, what="the update waiting between polls")
    node.refresh_from_db()
    assert node.lock_operation_id == op_id  # its node stays its own meanwhile
    for task in slow.tasks.values():
        task["polls"] = 0  # the BMC finishes
    slow.plan.polls = 1

    op = wait_operation(op_id, timeout=60)
    assert op.status == "succeeded", op.error
    assert op.result == {
        "updated": {
            "BMC": ["1.45.00", "1.52.00"],
            "GPU0": ["96.00.89.00.01", "96.00.A6.00.01"],
        }
    }


def test_an_update_past_its_limit_fails_saying_so(slow, node, settings):  # noqa: F811
    settings.CORRAL_CONVERGE_HOLD_SECONDS = 0  # lets go at once: each run asks once
    op = services.start_action(node, "apply_firmware", actor="user:tech")
    assert operations.begin_operation(op, worker="celery@w pid 1")
    with pytest.raises(Busy):
        firmware.apply(node, op)  # started: the BMC runs it
    op.result["in_flight"]["since"] -= settings.CORRAL_CONVERGE_UPDATE_SECONDS + 1
    with pytest.raises(firmware.UpdateFailed) as failed:
        firmware.apply(node, op)
    assert "the BMC's BMC update did not end within CORRAL_CONVERGE_UPDATE_SECONDS" in str(
        failed.value
    )
