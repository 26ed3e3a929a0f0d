"""The broker dies while a task runs: the task finishes (its acknowledgement has nowhere
to go), the worker stays up and reconnects to the Redis that comes back empty, the work
is done once, and work accepted afterwards runs. Real processes only: the production web
server, a worker with its embedded beat, a misbehaving Redfish BMC, a redis-server of the
test's own killed and started again."""

import pytest

from inventory.models import Node
from tests.factories import api_token
from tests.faults.helpers import act, assert_invariants, wait_running
from tests.workers import start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_task_running_when_the_broker_dies_finishes_once_and_the_worker_lives_on(
    private_redis, corral_web, users, slow_bmc_node, faulty_redfish, worker_env, tmp_path
):
    token = api_token(users["technician"])
    worker = start_worker({**worker_env, "CORRAL_REPUBLISH_SECONDS": "1"}, tmp_path / "w.log", "-B")
    try:
        op_id = act(corral_web, token, slow_bmc_node, "inspect")
        wait_running(op_id)  # mid-way: the BMC takes 8 s to list processors
        private_redis.kill()
        inspected = wait_operation(op_id, timeout=60)  # it ends while Redis is away
        private_redis.start()  # empty: the unacknowledged copy of its message is gone
        power = wait_operation(act(corral_web, token, slow_bmc_node, "power_on"), timeout=90)
        assert_invariants(worker)
    finally:
        stop_worker(worker)
    log = worker.output()
    assert "Unrecoverable error" not in log, log[-4000:]
    assert inspected.status == "succeeded", f"{inspected.error}\n{log[-3000:]}"
    assert power.status == "succeeded", f"{power.error}\n{log[-3000:]}"
    assert Node.objects.get(pk=slow_bmc_node.pk).state == "ready"
    reads = [r for r in faulty_redfish.requests if r[1].endswith("Processors")]
    assert len(reads) == 1, reads  # inspected once, not again after the outage
