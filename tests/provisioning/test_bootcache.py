"""The boot-storm path: the per-process node copy and the middleware-free WSGI route."""

import io
import time
from wsgiref.util import setup_testing_defaults

import pytest
from django.utils import timezone

from inventory.lifecycle import transition
from provisioning.bootcache import SubjectCache
from provisioning.models import BootRequest

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_copy_follows_a_transition_within_one_refresh(node):
    mac = node.interfaces.get().mac
    copy = SubjectCache(interval=3600, full_interval=3600, start=False)
    copy.refresh()
    assert copy.get(mac).state == "enrolled"
    time.sleep(0.01)
    transition(node, "inspect", "user:alice")
    copy.refresh()  # an incremental refresh: only rows updated since the last one
    assert copy.get(mac).state == "inspecting"
    assert copy.get("52:54:00:99:99:99") is None  # unknown: the caller asks the database


def call_wsgi(path: str, query: str, host: str = "127.0.0.1") -> tuple[str, bytes]:
    from fleet.wsgi import application

    environ = {
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "HTTP_HOST": host,
        "REQUEST_METHOD": "GET",
        "HTTP_USER_AGENT": "iPXE/1.0.0",
        "wsgi.input": io.BytesIO(),
    }
    setup_testing_defaults(environ)
    status = []
    body = b"".join(application(environ, lambda s, h: status.append(s)))
    return status[0], body


def test_wsgi_fast_path_answers_like_the_view(client, node):
    mac = node.interfaces.get().mac
    status, body = call_wsgi("/boot/ipxe", f"mac={mac}&arch=x86_64")
    assert status == "200 OK"
    assert (
        body.decode()
        == client.get(
            "/boot/ipxe", {"mac": mac, "arch": "x86_64"}, HTTP_HOST="127.0.0.1"
        ).content.decode()
    )
    assert BootRequest.objects.filter(node=node, answer="local").count() == 2


def test_wsgi_fast_path_checks_the_host_header(node):
    status, body = call_wsgi("/boot/ipxe", "mac=52:54:00:00:00:01", host="evil.example")
    assert status.startswith("400") and b"ALLOWED_HOSTS" in body


def test_a_cached_deploy_script_ends_with_the_deploy(client, node):
    from tests.factories import ImageFactory, start_deploy

    token = "tok-" + "c" * 40
    start_deploy(node, ImageFactory(), token)
    mac = node.interfaces.get().mac
    first = client.get("/boot/ipxe", {"mac": mac}).content.decode()
    again = client.get("/boot/ipxe", {"mac": mac}).content.decode()
    assert token in first and first == again
    transition(node, "fail", "system", "no phone-home")
    after = client.get("/boot/ipxe", {"mac": mac}).content.decode()
    assert token not in after and "kernel" not in after


def test_old_boot_records_are_pruned_but_each_node_keeps_its_latest(node, settings):
    from datetime import timedelta

    from django.utils import timezone

    from provisioning.tasks import prune_boot_records
    from tests.factories import NodeFactory

    quiet = NodeFactory(rack=node.rack, rack_unit=20, u_height=4)
    now = timezone.now()

    def record(target, days_ago: int) -> BootRequest:
        return BootRequest.objects.create(
            node=target,
            mac="52:54:00:00:00:09",
            answer="local" if target else "unknown",
            created=now - timedelta(days=days_ago),
        )

    pxe_looping = [record(node, 45), record(node, 40), record(node, 1)]
    last_boot_of_quiet_node = record(quiet, 90)
    strangers = [record(None, 60), record(None, 2)]
    settings.CORRAL_BOOT_RECORD_DAYS = 30
    assert prune_boot_records() == 3
    assert set(BootRequest.objects.values_list("id", flat=True)) == {
        pxe_looping[2].id,
        last_boot_of_quiet_node.id,
        strangers[1].id,
    }
    settings.CORRAL_BOOT_RECORD_DAYS = 0
    assert prune_boot_records() == 0 and BootRequest.objects.count() == 3


def test_pruning_goes_in_batches(node):
    from datetime import timedelta

    from django.utils import timezone

    from provisioning import bootlog

    old = timezone.now() - timedelta(days=40)
    BootRequest.objects.bulk_create(
        [
            BootRequest(node=node, mac="52:54:00:00:00:09", answer="local", created=old)
            for _ in range(7)
        ]
    )
    assert bootlog.prune(30, batch=2) == 6
    assert BootRequest.objects.count() == 1


def test_a_batch_keeps_the_records_of_a_node_deleted_before_the_flush(node, rack):
    from provisioning import bootlog
    from tests.factories import NodeFactory

    gone = NodeFactory(rack=rack, rack_unit=20, u_height=4)
    rows = [
        (
            n.pk,
            n.interfaces.get().mac,
            "in_service",
            "local",
            "iPXE/1.21.1",
            "10.0.0.9",
            timezone.now(),
        )
        for n in (node, gone)
    ]
    gone.delete()
    bootlog._write(rows)
    kept = dict(BootRequest.objects.values_list("mac", "node_id"))
    assert kept == {rows[0][1]: node.pk, rows[1][1]: None}
