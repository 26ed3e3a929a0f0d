"""Boot-request records: written in batches, pruned while each node keeps its latest."""

from datetime import timedelta

import pytest
from django.utils import timezone

from provisioning.bootserver import records
from provisioning.models import BootRequest
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_old_boot_records_are_pruned_but_each_node_keeps_its_latest(node, settings):
    from provisioning.tasks import prune_boot_records

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
    old = timezone.now() - timedelta(days=40)
    BootRequest.objects.bulk_create(
        [
            BootRequest(node=node, mac="52:54:00:00:00:09", answer="local", created=old)
            for _ in range(7)
        ]
    )
    assert records.prune(30, batch=2) == 6
    assert BootRequest.objects.count() == 1


def test_a_batch_keeps_the_records_of_a_node_deleted_before_the_flush(node, rack):
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
    records._write(rows)
    kept = dict(BootRequest.objects.values_list("mac", "node_id"))
    assert kept == {rows[0][1]: node.pk, rows[1][1]: None}


def test_a_record_the_database_refuses_costs_only_itself(node, settings):
    """A batch is written whole when it can be, and else by halves down to the bad row."""
    settings.CORRAL_BOOT_LOG_FLUSH_SECONDS = 3600  # batched; flushed by hand below
    good = {"state": "ready", "answer": "local", "client": "iPXE", "remote_addr": None}
    for n in range(5):
        records.record(node_id=node.pk, mac=f"52:54:00:00:01:0{n}", **good)
    records.record(
        node_id=None, mac="\x00", state="", answer="unknown", client="", remote_addr=None
    )  # PostgreSQL refuses NUL in text
    for n in range(5, 9):
        records.record(node_id=node.pk, mac=f"52:54:00:00:01:0{n}", **good)
    records.flush()
    good_macs = BootRequest.objects.filter(mac__startswith="52:54:00")
    assert sorted(good_macs.values_list("mac", flat=True)) == [
        f"52:54:00:00:01:0{n}" for n in range(9)
    ]
