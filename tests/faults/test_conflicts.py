"""Fifty clicks at once on one node, against the production web server and a real worker:
exactly one is accepted, the others are told who holds the node, and the BMC sees one
power cycle. Before, four of fifty were accepted and the BMC was reset five times."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from inventory.models import Node, Operation, Worker
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token
from tests.workers import QUEUES, start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(worker_env, tmp_path):
    worker = start_worker(worker_env, tmp_path / "worker.log")
    yield worker
    stop_worker(worker)


def test_fifty_concurrent_power_cycles_make_one_operation_and_one_reset(
    corral_web, worker_env, users, sushy_emulator_factory, tmp_path
):
    emulator = sushy_emulator_factory(systems=1)
    system = emulator.systems[0]
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one")),
        bmc__address=emulator.address,
        bmc__system_id=system.uuid,
        bmc__username="admin",
        bmc__password="pw",
        bmc__verify_tls=False,
    )
    emulator.force_power(system.uuid, "On")
    emulator.clear_journal()
    token = api_token(users["technician"])
    url = f"{corral_web}/api/v1/nodes/{node.pk}/actions/power_cycle/"

    def click(_: int) -> requests.Response:
        with requests.Session() as http:
            return http.post(url, json={}, headers={"Authorization": f"Token {token}"}, timeout=60)

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(click, range(50)))

    codes = sorted(r.status_code for r in answers)
    assert codes == [202] + [409] * 49, codes
    accepted = next(r.json() for r in answers if r.status_code == 202)
    for refused in (r.json() for r in answers if r.status_code == 409):
        assert f"locked by operation {accepted['id']} (power_cycle)" in refused["detail"], refused
    assert Operation.objects.filter(node=node).count() == 1

    # The worker starts only now: all fifty met an operation still pending, the case the
    # old code let through (its lock ended with the request, not with the operation).
    worker = start_worker(worker_env, tmp_path / "worker.log")
    try:
        op = wait_operation(accepted["id"], timeout=60)
    finally:
        stop_worker(worker)
    assert op.status == "succeeded", op.error
    # One cycle: the emulator offers no PowerCycle, so Corral sends off, then on.
    resets = [r["body"]["ResetType"] for r in emulator.requests_for(system.uuid, "POST")]
    assert resets == ["ForceOff", "On"], resets
    row = Node.objects.get(pk=node.pk)
    assert (row.reservation, row.lock_operation_id) == (None, None)

    # The node is free again once the operation has ended.
    assert click(0).status_code == 202


def test_a_running_worker_reports_the_queues_it_listens_to(worker):
    """The heartbeat the watchdog and the dashboard read ("no worker is listening on ...")."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        names = {q for w in Worker.objects.all() for q in w.queue_list}
        if set(QUEUES.split(",")) <= names:
            break
        time.sleep(0.2)
    assert set(QUEUES.split(",")) <= names
