"""A Redfish node's deploy recorded end to end: its inspection found the serial console
its ComputerSystem offers over SSH (the captured OpenBMC tree on sushy-static), so the
transition into deploying sends the recording to a real Celery worker, which reads
`SerialConsole.SSH` and records the machine over the BMC's SSH console
(tests/peers/bmc_ssh.py); the failed deploy's last line on the node page."""

from __future__ import annotations

import pytest
from django.utils import timezone

from consoles import selectors
from consoles.models import ConsoleLog
from inventory import lifecycle
from inventory.models import Node
from tests.factories import BMCFactory, NodeFactory, RackFactory, SiteFactory, put_in
from tests.peers.bmc_ssh import BMCConsoleSSH
from tests.peers.util import wait_until
from tests.provisioning.drivers.test_redfish_console import tree_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_redfish_deploy_is_recorded_over_the_bmcs_ssh_console(
    sushy_static_tree, tmp_path, celery_worker, client, users
):
    ssh = BMCConsoleSSH(username="root", password="0penBmc")
    try:
        peer = sushy_static_tree(tree_of("openbmc-stock", "system", tmp_path, ssh.port), "system")
        rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
        node = NodeFactory(bmc=None, rack=rack, hostname="gpu-rf-1")
        BMCFactory(
            node=node,
            protocol="redfish",
            address=peer.url,
            username="root",
            password="0penBmc",
            system_id="system",
            verify_tls=False,
        )
        # What the node's inspection read from this tree (test_redfish_corpus.py).
        Node.objects.filter(pk=node.pk).update(
            inspected_at=timezone.now(), hardware_facts={"serial_console": "ssh"}
        )
        node.refresh_from_db()
        put_in(node, "ready")
        lifecycle.transition(node, "deploy", actor="user:tech")

        def recording() -> ConsoleLog | None:
            return ConsoleLog.objects.filter(node=node, state="deploying").first()

        wait_until(lambda: recording() is not None, timeout=30, what="the worker recording")
        wait_until(ssh.attached, timeout=30, what="the SSH console session")

        def shows(text: str) -> bool:
            return text in selectors.readable(selectors.output(recording()))

        ssh.write(b"corral-deploy: writing image to /dev/nvme0n1\r\n")
        ssh.write(b"corral-deploy: \x1b[31mno space left on device\x1b[0m\r\n")
        wait_until(lambda: shows("no space left on device"), timeout=20, what="the last line")
        lifecycle.transition(node, "fail", actor="system", reason="no space left on device")
        wait_until(lambda: recording().ended is not None, timeout=15, what="the recording's end")
        assert recording().end_reason == "the node left deploying"
        assert shows("writing image to /dev/nvme0n1")
    finally:
        ssh.close()

    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "corral-deploy: no space left on device" in panel
