"""The attested-boot lab, shared by tests/e2e/test_attest_boot.py and `make bench-attest`
(devtools/bench_attest.py), so the benchmark boots what the end-to-end test proves: the
attestation-only gate profile, the UKI image as publishing records it, and a node whose
BMC is the Redfish emulator and whose VM boots through OVMF + iPXE (tests/peers/uefi_vm.py).
"""

from __future__ import annotations

import hashlib

from inventory.models import NetworkInterface, Node
from provisioning import uki
from provisioning.models import Image
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.netboot.artifacts import installed_kernel
from validation.models import GateProfile

GUEST_APP = "http://10.0.2.100:8800"  # how the VM reaches the web server (guestfwd)
PLATFORM = "QEMU q35"
ATTEST_ONLY = {
    "name": "attest-only",
    "title": "Attestation only",
    "version": 1,
    "gpu_models": ["H100-SXM"],
    "fabrics": ["ib-400g"],
    "phases": [
        {
            "name": "attestation",
            "checks": [
                {
                    "name": "tpm-quote",
                    "tool": "tpm-quote",
                    "command": "corral: verify this boot's TPM quote",
                    "timeout_s": 60,
                }
            ],
        }
    ],
}


def web_env() -> dict[str, str]:
    """The web server's environment: the VM reaches it through QEMU's guestfwd."""
    return {"ALLOWED_HOSTS": "127.0.0.1,localhost,10.0.2.100", "CORRAL_BOOT_BASE_URL": GUEST_APP}


def use_attest_only_profile() -> None:
    """The gate is attestation alone, so admission time is the verdict's time."""
    GateProfile.objects.update(is_default=False)
    GateProfile.objects.create(name="attest-only", spec=ATTEST_ONLY, is_default=True)


def publish_uki_image(uefi_netboot) -> Image:
    """The published image whose UKI the VMs boot, with the measurements publishing
    computes (tests/provisioning/test_uki_publish.py runs that path over HTTP), checked
    here against the peer's own Authenticode code."""
    files, art = uefi_netboot.files, uefi_netboot.artifacts
    kernel = installed_kernel()
    measured = uki.measurements(art.uki.read_bytes())
    assert measured["uki_authenticode"] == art.authenticode["uki"]
    assert measured["kernel_authenticode"] == art.authenticode["vmlinuz"]
    assert measured["initrd_sha256"] == art.initrd_sha256
    return Image.objects.create(
        name="debian-uki",
        version=art.kernel_version.replace("+", "-"),
        state="published",
        kernel_url=files.serve("vmlinuz", kernel.vmlinuz),
        kernel_sha256=hashlib.sha256(kernel.vmlinuz.read_bytes()).hexdigest(),
        initrd_url=files.serve("initrd.img", art.initrd),
        initrd_sha256=art.initrd_sha256,
        uki_url=uefi_netboot.uki_url,
        uki_sha256=art.uki_sha256,
        measurements=measured,
    )


def attest_node(
    *,
    site: str,
    policy: str,
    hostname: str,
    mac: str,
    serial: str,
    bmc_address: str,
    system_id: str,
) -> Node:
    """A ready node of platform PLATFORM in a new site `site` whose attestation policy is
    `policy` (required / allow_unattested); its boot NIC is `mac`."""
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug=site, name=site.upper(), attestation=policy)),
        hostname=hostname,
        serial=serial,
        model=PLATFORM,
        nic=None,
        bmc__address=bmc_address,
        bmc__system_id=system_id,
        state="ready",
    )
    NetworkInterface.objects.create(node=node, mac=mac, boot=True)
    return node
