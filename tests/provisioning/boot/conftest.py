"""One fixed fleet slice, so golden files change only when the renderers do."""

import os
import shutil
from pathlib import Path

import pytest

from provisioning.boot import BootImage, BootTarget, PhoneHome, Reservation, Subnet

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def tool(name: str, package: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if not path:
        pytest.fail(f"{name} not installed: apt-get install {package} (.ci/run does)")
    return path


@pytest.fixture
def target() -> BootTarget:
    return BootTarget(
        hostname="gpu001",
        mac="52:54:00:AA:00:01",
        ip="10.0.0.11",
        serial="SN-GPU001",
        arch="x86_64",
        site="dc1",
        uuid="11111111-2222-3333-4444-555555555555",
        fabric=[{"name": "rail0", "ip": "10.1.0.1/31"}, {"name": "rail1", "ip": "10.1.1.1/31"}],
    )


@pytest.fixture
def image() -> BootImage:
    base = "http://10.0.0.5:8000/images/ubuntu-gpu/2025.06.1"
    return BootImage(
        name="ubuntu-gpu",
        version="2025.06.1",
        kernel_url=f"{base}/vmlinuz",
        initrd_url=f"{base}/initrd.img",
        rootfs_url=f"{base}/rootfs.squashfs?sig=abc&exp=1750000000",
        cmdline=(
            "console=ttyS0,115200 root=live:{rootfs_url} corral.callback={callback_url}"
            " corral.token={token}"
        ),
        sha256={"rootfs": "ab" * 32},
    )


@pytest.fixture
def phone_home() -> PhoneHome:
    return PhoneHome(
        callback_url="http://10.0.0.5:8000/boot/phone-home/42", token="tok_Zq3LwQ8vN2mX7pR4sT9uY1aB"
    )


@pytest.fixture
def subnets() -> list[Subnet]:
    return [
        Subnet(
            cidr="10.0.0.0/24",
            gateway="10.0.0.1",
            boot_base_url="http://10.0.0.5:8000",
            dns_servers=["10.0.0.2", "10.0.0.3"],
            pool="10.0.0.100-10.0.0.199",
        ),
        Subnet(
            cidr="10.0.1.0/24",
            gateway="10.0.1.1",
            boot_base_url="http://corral.dc1:8000/",
            next_server="10.0.1.5",
        ),
    ]


@pytest.fixture
def reservations() -> list[Reservation]:
    return [
        Reservation(hostname="gpu001", mac="52:54:00:aa:00:01", ip="10.0.0.11"),
        Reservation(hostname="gpu002", mac="52:54:00:aa:00:02", ip="10.0.0.12"),
        Reservation(hostname="gpu003", mac="52:54:00:aa:00:03", ip="10.0.1.11"),
    ]
