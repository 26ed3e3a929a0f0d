"""A deploy's console recorded end to end: a transition into deploying -> the lifecycle
hook -> a real Celery worker on the site's queue -> pyghmi serial-over-LAN -> ipmi_sim ->
the machine's serial line; the failed deploy's last lines on the node page."""

from __future__ import annotations

import pytest

from consoles import selectors
from consoles.models import ConsoleLog
from inventory import lifecycle
from tests.consoles.helpers import ipmi_node
from tests.factories import RackFactory, SiteFactory, put_in
from tests.peers.serial_line import SerialLine
from tests.peers.util import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_failed_deploy_shows_the_console_it_ended_on(
    ipmi_sim_factory, celery_worker, client, users
):
    line = SerialLine()
    bmc = ipmi_sim_factory(name="e2esol", sol=line.port)
    line.wait_connected()
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    node = ipmi_node(bmc, rack=rack, hostname="gpu-sol-1")
    put_in(node, "ready")
    lifecycle.transition(node, "deploy", actor="user:tech")

    def recording() -> ConsoleLog | None:
        return ConsoleLog.objects.filter(node=node, state="deploying").first()

    wait_until(lambda: recording() is not None, timeout=30, what="the worker recording")

    # The worker attaches right after it opens the log: print until it shows.
    def shows(text: str) -> bool:
        return text in selectors.readable(selectors.output(recording()))

    def printed() -> bool:
        line.write(b"corral-deploy: writing image to /dev/nvme0n1\r\n")
        return shows("writing image")

    wait_until(printed, timeout=30, interval=0.5, what="the console in the log")
    line.write(b"corral-deploy: \x1b[31mimage checksum mismatch\x1b[0m\r\n")
    wait_until(lambda: shows("image checksum mismatch"), timeout=15, what="the last line")
    lifecycle.transition(node, "fail", actor="system", reason="image checksum mismatch")
    wait_until(lambda: recording().ended is not None, timeout=15, what="the recording's end")
    assert recording().end_reason == "the node left deploying"

    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "corral-deploy: image checksum mismatch" in panel
    line.close()
