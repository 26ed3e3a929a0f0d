"""The exports pass the real servers' own config checks, and those checks are real:
the same tools reject a config with a duplicate reservation fed past Corral's check."""

import json
import subprocess

from provisioning.boot import Reservation, render_dnsmasq, render_kea
from provisioning.boot.render import _render_dnsmasq, _render_kea

from .conftest import tool


def kea_check(path):
    return subprocess.run(
        [tool("kea-dhcp4", "kea-dhcp4-server"), "-t", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )


def dnsmasq_check(path):
    # -C replaces /etc/dnsmasq.conf (verified with strace: only this file is opened);
    # --test parses and exits without opening any socket.
    return subprocess.run(
        [tool("dnsmasq", "dnsmasq"), "--test", "-C", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_kea_accepts_export(tmp_path, subnets, reservations):
    path = tmp_path / "kea.json"
    # kea-dhcp4 -t checks that named interfaces exist on this machine: lo always does.
    path.write_text(render_kea(subnets, reservations, interfaces=["lo"]))
    result = kea_check(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_kea_rejects_duplicate_reserved_ip(tmp_path, subnets, reservations):
    dup = [*reservations, Reservation(hostname="gpu009", mac="52:54:00:aa:00:09", ip="10.0.0.11")]
    path = tmp_path / "kea.json"
    path.write_text(_render_kea(subnets, dup))
    result = kea_check(path)
    assert result.returncode != 0
    assert "10.0.0.11" in result.stdout + result.stderr


def test_kea_rejects_misspelled_key(tmp_path, subnets, reservations):
    config = json.loads(render_kea(subnets, reservations))
    config["Dhcp4"]["subnet4"][0]["reservatons"] = []
    path = tmp_path / "kea.json"
    path.write_text(json.dumps(config))
    assert kea_check(path).returncode != 0


def test_dnsmasq_accepts_export(tmp_path, subnets, reservations):
    path = tmp_path / "dnsmasq.conf"
    path.write_text(render_dnsmasq(subnets, reservations, tftp_root=str(tmp_path)))
    result = dnsmasq_check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "syntax check OK" in result.stdout + result.stderr


def test_dnsmasq_export_never_binds(subnets, reservations):
    text = render_dnsmasq(subnets, reservations)
    directives = {
        line.split("=", 1)[0] for line in text.splitlines() if line and not line.startswith("#")
    }
    assert not directives & {
        "interface",
        "listen-address",
        "bind-interfaces",
        "bind-dynamic",
        "except-interface",
        "port",
    }


def test_dnsmasq_rejects_broken_config(tmp_path, subnets, reservations):
    """dnsmasq 2.90 also refuses two dhcp-host lines with one IP."""
    dup = [*reservations, Reservation(hostname="gpu009", mac="52:54:00:aa:00:09", ip="10.0.0.11")]
    path = tmp_path / "dnsmasq.conf"
    path.write_text(_render_dnsmasq(subnets, dup))
    result = dnsmasq_check(path)
    assert result.returncode != 0
    path.write_text(render_dnsmasq(subnets, reservations) + "no-such-option=1\n")
    assert dnsmasq_check(path).returncode != 0
