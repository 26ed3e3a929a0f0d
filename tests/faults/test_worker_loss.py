"""A worker killed in the middle of an operation, as the OOM killer or a power loss would:
the operation ends within about a minute saying which worker was lost, the node is
released and out of its transitional state, nothing is run twice, and work goes on.
Before, the node stayed `inspecting` for 15 min and locked for an hour.

Real processes only: the production web server, Celery workers (threads, as site workers
run; prefork for a killed child), a misbehaving Redfish BMC, a redis-server of the test's own.
"""

import os
import signal
import time
from pathlib import Path

import pytest
import requests
from rest_framework.authtoken.models import Token

from inventory.models import Node, Operation
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.faulty_http import SYSTEM
from tests.peers.redis import private_redis  # noqa: F401
from tests.workers import database_url, start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corral_web_env(private_redis):  # noqa: F811  (the web server's broker)
    return {"REDIS_URL": private_redis.url}


@pytest.fixture
def worker_env(private_redis, tmp_path):  # noqa: F811
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": private_redis.url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_HEARTBEAT_SECONDS": "0.5",
        "CORRAL_LOCK_STALE_SECONDS": "3",
        "CORRAL_DEADLINE_SWEEP_SECONDS": "1",
        "CELERY_BEAT_SCHEDULE_FILENAME": str(tmp_path / "beat-schedule"),
    }


@pytest.fixture
def slow_bmc_node(faulty_redfish):
    """A node whose BMC takes 8 s to list processors: inspection is mid-way for a while."""
    faulty_redfish.inject("GET", f"{SYSTEM}/Processors", delay=8)
    return NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one")),
        state="enrolled",
        bmc__address=faulty_redfish.address,
        bmc__system_id="sys1",
        bmc__username="admin",
        bmc__password="pw",
        bmc__verify_tls=False,
    )


def act(corral_web: str, token: str, node: Node, action: str) -> int:
    resp = requests.post(
        f"{corral_web}/api/v1/nodes/{node.pk}/actions/{action}/",
        json={},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["id"]


def wait_running(op_id: int, timeout: float = 30) -> Operation:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = Operation.objects.get(pk=op_id)
        if op.status == "running" and op.progress >= 30:
            return op
        time.sleep(0.1)
    raise AssertionError(f"operation {op_id} never got going: {op.status} {op.message}")


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
    token = Token.objects.get_or_create(user=users["technician"])[0].key
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
    finally:
        stop_worker(second)
    # Never twice: nobody inspected the node again.
    assert len([r for r in faulty_redfish.requests if r[1].endswith("Processors")]) == (
        processors_reads
    )


def test_a_killed_prefork_child_is_named_by_the_redelivery_at_once(
    corral_web, users, slow_bmc_node, worker_env, tmp_path
):
    token = Token.objects.get_or_create(user=users["technician"])[0].key
    worker = start_worker(worker_env, tmp_path / "prefork.log", "--pool", "prefork", "-c", "1")
    try:
        op_id = act(corral_web, token, slow_bmc_node, "inspect")
        running = wait_running(op_id)
        (child,) = children_of(worker.process.pid)
        assert running.worker.endswith(f"pid {child}")

        os.kill(child, signal.SIGKILL)
        # No beat here: the redelivered message (reject on worker lost) finds the dead
        # child's claim and ends the operation itself.
        op = wait_operation(op_id, timeout=30)
        assert_lost_and_released(op, slow_bmc_node, f"pid {child} was killed during inspect")
        assert worker.process.poll() is None, "the worker itself must survive"
    finally:
        stop_worker(worker)
