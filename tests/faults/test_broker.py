"""The message broker down while work is accepted: real processes only (the production
web server, a worker with its beat, a redis-server of the test's own, killed and started
again). An accepted action runs once the broker is back; nothing is half-recorded."""

import os

import pytest
import requests

from inventory.models import Node, Operation
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token
from tests.peers.redis import private_redis  # noqa: F401
from tests.workers import database_url, start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_an_action_accepted_while_the_broker_is_down_runs_when_it_is_back(
    private_redis,  # noqa: F811
    corral_web,
    users,
    sushy_emulator_factory,
    tmp_path,
):
    emulator = sushy_emulator_factory(systems=1)
    system = emulator.systems[0]
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    node = NodeFactory(
        rack=rack,
        bmc__address=emulator.address,
        bmc__system_id=system.uuid,
        bmc__username="admin",
        bmc__password="pw",
        bmc__verify_tls=False,
    )
    assert emulator.power_state(system.uuid) == "Off"
    token = api_token(users["technician"])

    private_redis.kill()
    resp = requests.post(
        f"{corral_web}/api/v1/nodes/{node.pk}/actions/power_on/",
        json={},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    # Before: a 500 after the operation was committed, which then stayed pending for ever.
    assert resp.status_code == 202, resp.text
    op = Operation.objects.get(pk=resp.json()["id"])
    assert (op.status, op.task_id, op.task_name) == (
        "pending",
        "unsent",
        "provisioning.tasks.power_node",
    )
    assert "waiting for the message broker" in op.message

    private_redis.start()  # empty: whatever Redis held before is gone
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": private_redis.url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_REPUBLISH_SECONDS": "1",
        "CELERY_BEAT_SCHEDULE_FILENAME": str(tmp_path / "beat-schedule"),
    }
    worker = start_worker(env, tmp_path / "worker.log", "-B")
    try:
        op = wait_operation(op.pk, timeout=60)
    finally:
        stop_worker(worker)
    assert op.status == "succeeded", f"{op.error}\n{worker.output()[-3000:]}"
    assert emulator.power_state(system.uuid) == "On"
    assert Node.objects.get(pk=node.pk).power_state == "on"
