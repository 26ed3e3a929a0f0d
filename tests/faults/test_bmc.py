"""A BMC that hangs, answers 500, or drops the connection while a real worker powers its
node on: the operation ends failed with the BMC's trouble in words after its retries, the
node is left free and in its state, the worker is unharmed, and once the BMC behaves the
same action succeeds."""

import pytest

from inventory.models import Node
from tests.factories import api_token
from tests.faults.helpers import act, assert_invariants
from tests.peers.faulty_http import RESET
from tests.workers import start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FAULTS = {
    "hangs": ({"delay": 30}, "no Redfish answer"),
    "answers-500": ({"status": 500}, "500"),
    "drops-the-connection": ({"drop": True}, ""),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_misbehaving_bmc_fails_the_operation_with_its_reason_and_nothing_else(
    fault, corral_web, users, slow_bmc_node, faulty_redfish, worker_env, tmp_path
):
    faulty_redfish.faults.clear()  # slow_bmc_node's slow inventory is not this test's point
    injected, words = FAULTS[fault]
    faulty_redfish.inject("POST", RESET, **injected)
    env = {
        **worker_env,
        "CORRAL_BMC_RETRIES": "1",
        "CORRAL_BMC_RETRY_BASE_SECONDS": "0.5",
        "CORRAL_BMC_TIMEOUT_SECONDS": "2",  # a hang is a hang whatever the wait
    }
    worker = start_worker(env, tmp_path / "worker.log")
    token = api_token(users["technician"])
    try:
        op = wait_operation(act(corral_web, token, slow_bmc_node, "power_on"), timeout=90)
        assert op.status == "failed"
        assert faulty_redfish.address.split("//")[-1] in op.error, op.error
        assert words in op.error and "gave up after 1 retries" in op.error, op.error
        row = Node.objects.get(pk=slow_bmc_node.pk)
        assert row.state == "enrolled" and row.bmc_message == op.error
        assert_invariants(worker)

        faulty_redfish.faults.clear()  # the BMC mended
        again = wait_operation(act(corral_web, token, slow_bmc_node, "power_on"), timeout=60)
        assert again.status == "succeeded", again.error
        assert faulty_redfish.power == "On"
        assert_invariants(worker)
    finally:
        stop_worker(worker)
