"""A worker killed in the middle of an operation, as the OOM killer or a power loss would:
the operation ends within about a minute saying which worker was lost, the node is
released and out of its transitional state, nothing is run twice, and work goes on.
Before, the node stayed `inspecting` for 15 min and locked for an hour.

Real processes only: the production web server, Celery workers (threads, as site workers
run; prefork for a killed child), a misbehaving Redfish BMC, a redis-server of the test's own.
"""

import os
import signal
from pathlib import Path

import pytest

from inventory.models import Node, Operation
from tests.factories import api_token
from tests.faults.helpers import act, assert_invariants, wait_running
from tests.workers import start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def children_of(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(p) for p in text.split()]


def assert_lost_and_released(op: Operation, node: Node, how: str) -> None:
    assert op.status == "failed", op.error
    assert op.error.startswith("lost with its worker: "), op.error
    assert how in op.error and "inspect was not run again" in op.error
    row = Node.objects.get(pk=node.pk)
    assert row.state == "failed" and row.failure_reason == op.error
    assert (row.reservation, row.lock_operation_id) == (None, None)


def test_a_worker_killed_outright_is_noticed_by_its_heartbeat(
    corral_web, users, slow_bmc_node, worker_env, faulty_redfish, tmp_path
):
    token = api_token(users["technician"])
    first = start_worker(worker_env, tmp_path / "first.log")
    op_id = act(corral_web, token, slow_bmc_node, "inspect")
    running = wait_running(op_id)
    assert running.worker.endswith(f"pid {first.process.pid}")

    first.process.send_signal(signal.SIGKILL)  # the whole worker, no goodbye
    first.process.wait(timeout=10)
    # What a supervisor does: start it again (here with beat, whose watchdog notices).
    second = start_worker(worker_env, tmp_path / "second.log", "-B")
    try:
        op = wait_operation(op_id, timeout=60)
        assert_lost_and_released(op, slow_bmc_node, "stopped responding")
        processors_reads = len([r for r in faulty_redfish.requests if r[1].endswith("Processors")])

        # Work goes on: the node is free and the new worker runs what is asked next.
        power = wait_operation(act(corral_web, token, slow_bmc_node, "power_on"), timeout=60)
        assert power.status == "succeeded", power.error
        assert faulty_redfish.power == "On"
        assert_invariants(second)
    finally:
        stop_worker(second)
    # Never twice: nobody inspected the node again.
    assert len([r for r in faulty_redfish.requests if r[1].endswith("Processors")]) == (
        processors_reads
    )


def test_a_killed_prefork_child_is_named_at_once(
    corral_web, users, slow_bmc_node, worker_env, tmp_path
):
    token = api_token(users["technician"])
    worker = start_worker(worker_env, tmp_path / "prefork.log", "--pool", "prefork", "-c", "1")
    try:
        op_id = act(corral_web, token, slow_bmc_node, "inspect")
        running = wait_running(op_id)
        (child,) = children_of(worker.process.pid)
        assert running.worker.endswith(f"pid {child}")

        os.kill(child, signal.SIGKILL)
        # No beat here: the pool tells its parent the child was lost, and the parent
        # finds the dead child's claim and ends the operation itself.
        op = wait_operation(op_id, timeout=30)
        assert_lost_and_released(op, slow_bmc_node, f"pid {child} was killed during inspect")
        assert_invariants(worker)  # the worker itself survives
    finally:
        stop_worker(worker)
