"""DHCP exports from the inventory, accepted by the real Kea and dnsmasq."""

import subprocess

import pytest
from django.core.management import CommandError, call_command

from inventory.models import NetworkInterface
from provisioning.models import Subnet
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet(rack):
    Subnet.objects.create(
        site=rack.site,
        cidr="10.20.0.0/24",
        gateway="10.20.0.1",
        dns_servers=["10.20.0.2"],
        pool_start="10.20.0.200",
        pool_end="10.20.0.250",
        boot_base_url="http://10.20.0.5:8000",
    )
    for i in range(1, 4):
        node = NodeFactory(rack=rack, hostname=f"gpu{i:03d}", nic=None)
        NetworkInterface.objects.create(
            node=node, mac=f"52:54:00:00:10:{i:02x}", ip=f"10.20.0.{10 + i}", boot=True
        )
    return rack


def export(tmp_path, fmt, capsys, site=None) -> str:
    args = ["export_dhcp", "--format", fmt] + (["--site", site] if site else [])
    call_command(*args)
    out = capsys.readouterr().out
    (tmp_path / f"out.{fmt}").write_text(out)
    return out


def test_kea_export_passes_kea_dhcp4_t(fleet, tmp_path, capsys):
    out = export(tmp_path, "kea", capsys, site="dc1")
    assert '"hw-address": "52:54:00:00:10:01"' in out and '"ip-address": "10.20.0.11"' in out
    result = subprocess.run(
        ["kea-dhcp4", "-t", str(tmp_path / "out.kea")], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dnsmasq_export_passes_dnsmasq_test(fleet, tmp_path, capsys):
    out = export(tmp_path, "dnsmasq", capsys)
    assert "dhcp-host=52:54:00:00:10:02" in out and "dhcp-userclass=set:ipxe,iPXE" in out
    result = subprocess.run(
        ["dnsmasq", "--test", f"--conf-file={tmp_path / 'out.dnsmasq'}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_reservation_outside_every_subnet_is_caught_before_export(fleet, capsys):
    NetworkInterface.objects.filter(mac="52:54:00:00:10:03").update(ip="192.168.9.9")
    with pytest.raises(CommandError, match="192.168.9.9") as info:
        call_command("export_dhcp", "--format", "kea")
    assert "gpu003" in str(info.value)


def test_api_export_and_errors(api, fleet):
    client = api("manager")
    resp = client.get("/api/v1/dhcp/kea/", {"site": "dc1"})
    assert resp.status_code == 200 and resp["Content-Type"] == "application/json"
    assert client.get("/api/v1/dhcp/isc/").status_code == 404
    resp = client.get("/api/v1/dhcp/kea/", {"site": "nowhere"})
    assert resp.status_code == 400
    assert resp.data["site"] == ["No site with slug or name 'nowhere'; sites: dc1."]


@pytest.mark.parametrize("fmt", ["kea", "dnsmasq"])
def test_uefi_http_boot_clients_are_sent_to_the_configured_loader(
    fleet, tmp_path, capsys, settings, fmt
):
    settings.CORRAL_HTTP_BOOT_LOADER_X64 = "http://10.20.0.7/efi/ipxe-x64.efi"
    settings.CORRAL_HTTP_BOOT_LOADER_ARM64 = "http://10.20.0.7/efi/ipxe-arm64.efi"
    out = export(tmp_path, fmt, capsys)
    assert "http://10.20.0.7/efi/ipxe-x64.efi" in out and "HTTPClient" in out
    check = (
        ["kea-dhcp4", "-t", str(tmp_path / "out.kea")]
        if fmt == "kea"
        else ["dnsmasq", "--test", f"--conf-file={tmp_path / 'out.dnsmasq'}"]
    )
    result = subprocess.run(check, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_bad_http_boot_loader_url_is_refused_with_what_to_fix(api, fleet, settings):
    settings.CORRAL_HTTP_BOOT_LOADER_X64 = "http://10.20.0.7/efi/ipxe.efi,evil"
    resp = api("manager").get("/api/v1/dhcp/dnsmasq/")
    assert resp.status_code == 400
    assert "HTTP-boot loader http_x64" in resp.data["detail"]
    assert "http://host[:port][/path]" in resp.data["detail"]
    settings.CORRAL_HTTP_BOOT_LOADER_X64 = "http://10.20.0.7/" + "e" * 120 + ".efi"
    resp = api("manager").get("/api/v1/dhcp/kea/")
    assert resp.status_code == 400 and "at most 127" in resp.data["detail"]
