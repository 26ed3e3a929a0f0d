"""A relay lives as long as its console is wanted, and a worker relays many consoles at
once: with PostgreSQL's connection pool (CORRAL_DB_POOL_SIZE) smaller than the number of
consoles, a relay that kept its connection between turns would leave the others waiting
for one (and failing after CORRAL_DB_POOL_TIMEOUT). Here: a worker whose pool holds one
connection records two deploys at once."""

from __future__ import annotations

import os

import pytest

from consoles.models import ConsoleLog
from inventory import lifecycle
from tests.consoles.helpers import ipmi_node, log_shows
from tests.factories import RackFactory, SiteFactory, put_in
from tests.peers.serial_line import SerialLine
from tests.peers.util import wait_until
from tests.workers import database_url, start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_more_recordings_than_pooled_connections_all_record(ipmi_sim_factory, tmp_path):
    if "sqlite" in database_url():
        pytest.fail("the pool is PostgreSQL's: run with DATABASE_URL (make test does)")
    lines = [SerialLine(), SerialLine()]
    worker = None
    try:
        rack = RackFactory(site=SiteFactory(slug="pool", name="One connection"), name="r1")
        nodes = []
        for n, line in enumerate(lines):
            bmc = ipmi_sim_factory(name=f"pool{n}", sol=line.port)
            line.wait_connected()
            nodes.append(ipmi_node(bmc, rack=rack, hostname=f"gpu-pool-{n}", state="ready"))
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "DJANGO_SETTINGS_MODULE": "fleet.settings",
            "CORRAL_DB_POOL_SIZE": "1",
            "CORRAL_DB_POOL_TIMEOUT": "5",
        }
        worker = start_worker(env, tmp_path / "worker.log", queues="site.pool")
        for node in nodes:
            put_in(node, "ready")
            lifecycle.transition(node, "deploy", actor="user:tech")

        for node, line in zip(nodes, lines, strict=True):

            def printed(node=node, line=line) -> bool:  # until its console is attached
                line.write(f"{node.hostname}: writing image\r\n".encode())
                return log_shows(node, f"{node.hostname}: writing image")

            wait_until(printed, timeout=60, interval=0.5, what=f"{node.hostname} recorded")
        for node in nodes:
            lifecycle.transition(node, "fail", actor="system", reason="enough")
        ended = ConsoleLog.objects.filter(node__in=nodes, ended__isnull=False)
        wait_until(lambda: ended.count() == 2, timeout=30, what="both recordings' ends")
        assert {log.end_reason for log in ended} == {"the node left deploying"}
        assert "couldn't get a connection" not in worker.output()
    finally:
        if worker is not None:
            stop_worker(worker)
        for line in lines:
            line.close()
