"""What /boot/ipxe records of MACs Corral does not know is bounded (issue 36, finding 16):
it answers without credentials, and 2,000 requests made 2,000 rows. Each unknown MAC is
recorded once a window, an asking address at most CORRAL_BOOT_UNKNOWN_PER_SOURCE times;
enrolled nodes are recorded every time, whatever an address does."""

from __future__ import annotations

import pytest

from provisioning.models import BootRequest

pytestmark = pytest.mark.django_db


def ipxe(client, mac: str, source: str):
    return client.get(
        "/boot/ipxe", {"mac": mac, "arch": "x86_64"}, REMOTE_ADDR=source, HTTP_USER_AGENT="iPXE"
    )


def test_one_unknown_mac_asked_fifty_times_is_one_row(client):
    for _ in range(50):
        assert ipxe(client, "52:54:00:aa:00:01", "10.9.0.7").status_code == 200
    assert BootRequest.objects.filter(node__isnull=True).count() == 1


def test_one_address_asking_for_many_unknown_macs_is_bounded(client, settings):
    settings.CORRAL_BOOT_UNKNOWN_PER_SOURCE = 20
    for n in range(60):
        assert ipxe(client, f"52:54:00:bb:00:{n:02x}", "10.9.0.8").status_code == 200
    assert BootRequest.objects.filter(remote_addr="10.9.0.8").count() == 20
    # Another address is its own count.
    ipxe(client, "52:54:00:cc:00:01", "10.9.0.9")
    assert BootRequest.objects.filter(remote_addr="10.9.0.9").count() == 1


def test_an_enrolled_node_is_recorded_every_time_even_from_a_busy_address(client, node, settings):
    settings.CORRAL_BOOT_UNKNOWN_PER_SOURCE = 1
    ipxe(client, "52:54:00:dd:00:01", "10.9.0.10")
    ipxe(client, "52:54:00:dd:00:02", "10.9.0.10")  # over the bound: not recorded
    mac = node.interfaces.get().mac
    for _ in range(5):
        ipxe(client, mac, "10.9.0.10")
    assert BootRequest.objects.filter(node=node).count() == 5
    assert BootRequest.objects.filter(node__isnull=True).count() == 1
