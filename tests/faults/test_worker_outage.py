"""The broker dies under a running worker: real processes only (a worker with its embedded
beat, the production web server, a redis-server of the test's own, killed and started
again empty). The worker stays up; the retry waiting for its time (in the database, not
in a broker message) still runs; beat's sweeps go on; work accepted during and after the
outage runs."""

import os

import pytest
import requests

from inventory.models import BMC, Node, Operation
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token
from tests.peers.redis import private_redis  # noqa: F401
from tests.peers.util import LOOPBACK, free_port, wait_until
from tests.workers import database_url, start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Long enough that the retry is still waiting in the worker when Redis dies and comes back
# (the test checks that it is).
RETRY_SECONDS = 12


@pytest.fixture
def corral_web_env(private_redis):  # noqa: F811  (the web server's broker)
    return {"REDIS_URL": private_redis.url}


def test_a_worker_rides_out_a_broker_restart_and_loses_nothing_it_held(
    private_redis,  # noqa: F811
    corral_web,
    users,
    sushy_emulator_factory,
    tmp_path,
):
    emulator = sushy_emulator_factory(systems=3)
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    held_node, outage_node, after_node = (
        NodeFactory(
            rack=rack,
            bmc__address=emulator.address,
            bmc__system_id=system.uuid,
            bmc__username="admin",
            bmc__password="pw",
            bmc__verify_tls=False,
        )
        for system in emulator.systems
    )
    # The first node's BMC is unreachable for now: its power-on fails transiently and is
    # retried after a backoff, recorded as the operation's not_before.
    BMC.objects.filter(node=held_node).update(address=f"http://{LOOPBACK}:{free_port()}")
    token = api_token(users["technician"])

    def power_on(node):
        resp = requests.post(
            f"{corral_web}/api/v1/nodes/{node.pk}/actions/power_on/",
            json={},
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )
        assert resp.status_code == 202, resp.text
        return Operation.objects.get(pk=resp.json()["id"])

    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": private_redis.url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_REPUBLISH_SECONDS": "1",
        "CELERY_BEAT_SCHEDULE_FILENAME": str(tmp_path / "beat-schedule"),
        "CORRAL_BMC_RETRIES": "2",
        "CORRAL_BMC_RETRY_BASE_SECONDS": str(RETRY_SECONDS),
    }
    worker = start_worker(env, tmp_path / "worker.log", "-B")
    try:
        held = power_on(held_node)
        wait_until(
            lambda: (
                "retry 1 of 2 at" in (row := Operation.objects.get(pk=held.pk)).message
                and row.task_id == "deferred"
            ),
            timeout=30,
            interval=0.2,
            what="the power-on retry, waiting in the database for its time",
        )

        private_redis.kill()
        outage = power_on(outage_node)
        assert Operation.objects.get(pk=outage.pk).task_id == "unsent"
        # Meanwhile the BMC network is mended; the held retry re-reads the node's BMC.
        BMC.objects.filter(node=held_node).update(address=emulator.address)
        wait_until(
            lambda: "Connection to broker lost" in worker.output(),
            timeout=30,
            interval=0.2,
            what="the worker to see the broker gone (it keeps trying to reconnect)",
        )
        assert worker.process.poll() is None, worker.output()[-4000:]

        private_redis.start()  # empty: the queues, bindings and `unacked` copies are gone
        held_row = Operation.objects.get(pk=held.pk)
        assert held_row.task_id == "deferred" and held_row.finished is None, held_row.message
        after = power_on(after_node)
        finished = {
            name: wait_operation(op.pk, timeout=90)
            for name, op in (("held", held), ("outage", outage), ("after", after))
        }
        alive = worker.process.poll() is None
    finally:
        stop_worker(worker)
    log = worker.output()
    assert alive, log[-4000:]
    assert "Unrecoverable error" not in log, log[-4000:]
    for name, op in finished.items():
        assert op.status == "succeeded", f"{name}: {op.status} {op.error}\n{log[-4000:]}"
    for node in (held_node, outage_node, after_node):
        assert emulator.power_state(node.bmc.system_id) == "On"
        assert Node.objects.get(pk=node.pk).power_state == "on"
