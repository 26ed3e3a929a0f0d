"""The node page's console panel: the last lines of the latest recording as a terminal
showed them, a failed deploy marked, the whole log as text; another site's reader sees
nothing."""

from __future__ import annotations

import pytest
from celery.signals import before_task_publish
from django.utils import timezone

from consoles.models import ConsoleLog, ConsoleSession
from consoles.recorder import Recorder
from inventory.lifecycle import transition
from inventory.models import BMC, Node, SiteRole
from tests.factories import (
    NodeFactory,
    OperationFactory,
    RackFactory,
    SiteFactory,
    put_in,
    user_in,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def node(rack):
    return NodeFactory(rack=rack, hostname="gpu-017")


def recorded(node, data: bytes, **fields) -> ConsoleLog:
    log = ConsoleLog.objects.create(node=node, state="deploying", **fields)
    recorder = Recorder(log)
    recorder.write(data)
    recorder.flush(ended=True, reason="the node left deploying")
    return log


def test_a_failed_deploy_shows_its_last_console_lines(client, users, node):
    op = OperationFactory(node=node, kind="deploy", status="failed")
    lines = b"".join(b"[   %2d.000000] boot step %d\r\n" % (i, i) for i in range(60))
    recorded(node, lines + b"\x1b[1;31mKernel panic - not syncing: VFS\x1b[0m\r\n", operation=op)
    client.force_login(users["manager"])
    assert 'id="console-panel-slot"' in client.get(f"/nodes/{node.pk}/").content.decode()
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "failed</span>" in panel
    shown = panel.split('id="console-lines"')[1].split(">", 1)[1].split("</pre>")[0]
    assert shown.splitlines()[-1] == "Kernel panic - not syncing: VFS"
    assert len(shown.splitlines()) == 40 and "boot step 21" in shown and "boot step 20" not in shown


def test_markup_written_on_a_console_is_shown_as_text(client, users, node):
    recorded(node, b"<script>alert(1)</script>\r\n")
    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in panel and "<script>" not in panel


def test_the_whole_log_is_a_text_download(client, users, node):
    log = recorded(node, b"GRUB loading.\r\n\x1b[2Jcorral-deploy: writing image\r\n")
    client.force_login(users["technician"])
    answer = client.get(f"/nodes/{node.pk}/console-logs/{log.pk}.txt")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "text/plain; charset=utf-8"
    assert "gpu-017-console-" in answer["Content-Disposition"]
    assert answer.content.decode() == "GRUB loading.\ncorral-deploy: writing image\n"


def test_a_node_never_recorded_says_when_it_will_be(client, users, rack):
    node = NodeFactory(rack=rack)
    BMC.objects.filter(node=node).update(protocol="ipmi", address="127.0.0.1")
    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "Corral records it while the node deploys or runs its gates" in panel


def test_a_redfish_node_not_inspected_says_when_its_console_is_known(client, users, node):
    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert (
        "Not recorded: whether its BMC offers a serial console is known once the node is "
        "inspected." in panel
    )


def test_a_redfish_node_inspected_without_an_ssh_console_says_so(client, users, node):
    Node.objects.filter(pk=node.pk).update(
        inspected_at=timezone.now(), hardware_facts={"serial_console": None}
    )
    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "Not recorded: its BMC offers no serial console over SSH" in panel


def published_on_deploy(node, capture) -> list[str]:
    """The tasks sent when the node enters deploying."""
    sent: list[str] = []

    def heard(sender=None, **_):
        sent.append(sender)

    before_task_publish.connect(heard, weak=False)
    try:
        put_in(node, "ready")
        with capture(execute=True):
            transition(node, "deploy", "user:tech")
    finally:
        before_task_publish.disconnect(heard)
    return sent


def test_a_node_entering_deploying_behind_a_bmc_without_a_console_sends_no_recording(
    node, django_capture_on_commit_callbacks
):
    Node.objects.filter(pk=node.pk).update(
        inspected_at=timezone.now(), hardware_facts={"serial_console": None}
    )
    sent = published_on_deploy(node, django_capture_on_commit_callbacks)
    assert "consoles.tasks.record_console" not in sent


def test_a_redfish_node_whose_inspection_found_an_ssh_console_is_recorded(
    node, django_capture_on_commit_callbacks
):
    Node.objects.filter(pk=node.pk).update(
        inspected_at=timezone.now(), hardware_facts={"serial_console": "ssh"}
    )
    node.refresh_from_db()
    sent = published_on_deploy(node, django_capture_on_commit_callbacks)
    assert "consoles.tasks.record_console" in sent


def test_another_sites_reader_sees_neither_panel_nor_log(client, node):
    log = recorded(node, b"secret boot\r\n")
    other = RackFactory(site=SiteFactory(slug="hall-b")).site
    reader = user_in(None, "hall-b-manager")
    SiteRole.objects.create(user=reader, role="manager", site=other)
    client.force_login(reader)
    assert client.get(f"/nodes/{node.pk}/console-panel/").status_code == 404
    assert client.get(f"/nodes/{node.pk}/console-logs/{log.pk}.txt").status_code == 404


def test_who_was_at_the_console_is_shown(client, users, node):
    ConsoleSession.objects.create(node=node, actor="os:alice", via="cli")
    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/console-panel/").content.decode()
    assert "os:alice (manage.py console)" in panel.split('id="console-sessions"')[1]
