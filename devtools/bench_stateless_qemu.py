"""The QEMU half of `make bench-stateless`: how much longer a stateless boot takes to
phone home than a disk boot. Not a test.

One QEMU machine (tests/peers/netboot: iPXE, the test kernel and initramfs) deploys two
images published for real into the image store (CORRAL_IMAGE_STORE) and served by
Corral's production server: `disk` (kernel and initramfs; the initramfs phones home) and
`stateless` (the same, plus the test root image: the initramfs fetches it, checks its
sha256, mounts it under an overlay, lays the node's overlay and switches to it, and the
root's own init phones home). The runs alternate; each is timed from QEMU's start to the
phone-home on its console. What it leaves out, and says in docs/boot-modes.md: a real
disk deploy writes the image to the disk first (the test's disk boot does not, so this
is the stateless boot against the cheapest disk boot there is), and the test root image
is a few MB where a real one is hundreds.
"""

from __future__ import annotations

import secrets
import statistics
from datetime import timedelta
from pathlib import Path

from django.utils import timezone


def say(msg: str) -> None:
    print(f"bench-stateless: {msg}", flush=True)


def boots(work: Path, store: Path, runs: int) -> tuple[float, float]:
    """Median seconds to phone home of (disk, stateless) boots, `runs` each."""
    from django.conf import settings

    from inventory.lifecycle import transition
    from inventory.models import NetworkInterface, Node, Operation, Rack, Site
    from provisioning import images
    from provisioning.deployments import token_hash
    from provisioning.models import Deployment, Image
    from tests.day2 import scenario
    from tests.factories import put_in
    from tests.peers.netboot.artifacts import (
        INITRD_NAME,
        KERNEL_NAME,
        build_boot_artifacts,
        serve_artifacts,
    )
    from tests.peers.netboot.stateless import ROOT_NAME, build_root_image, stateless_image
    from tests.peers.qemu import APT_HINT, missing_prerequisites
    from tests.peers.qemu_fixture import NetBoot
    from tests.peers.util import wait_for_port
    from tests.peers.web import start_web, stop_web

    missing = missing_prerequisites()
    if missing:
        raise SystemExit(f"the QEMU boots need: {', '.join(missing)}; {APT_HINT}")
    settings.CORRAL_IMAGE_STORE = str(store)
    artifacts = build_boot_artifacts(work / "artifacts")
    with serve_artifacts(artifacts) as files:
        netboot = NetBoot(artifacts=artifacts, files=files, root=work / "vms")
        root, root_sha = build_root_image(work / ROOT_NAME)
        files.serve(ROOT_NAME, root)
        stateless = stateless_image(netboot, root_sha, name="ram-qemu", kept=True)
        disk = Image.objects.create(
            name="disk-qemu",
            version="1",
            kernel_url=f"{files.host_base_url}/{KERNEL_NAME}",
            initrd_url=f"{files.host_base_url}/{INITRD_NAME}",
            kernel_sha256=files.kernel_sha256,
            initrd_sha256=files.initrd_sha256,
        )
        images.verify_and_publish(
            Operation.objects.create(kind="publish_image", actor="bench", params={"image": disk.pk})
        )
        mac, serial, uuid = netboot.identity()
        rack = Rack.objects.create(
            site=Site.objects.create(name="QEMU hall", slug="qemu"), name="q01", u_height=42
        )
        node = Node.objects.create(rack=rack, serial=serial, hostname="ram-qemu-1")
        NetworkInterface.objects.create(node=node, mac=mac, boot=True)
        web = start_web(
            work / "web-qemu.log",
            {
                **scenario.web_env(),
                "CORRAL_IMAGE_STORE": str(store),
                "CORRAL_GATE_ON_PHONE_HOME": "false",
            },
        )
        try:
            wait_for_port(web.port, timeout=30, proc=web.process)
            times: dict[str, list[float]] = {"disk": [], "stateless": []}
            for run in range(runs):
                for name, image in (("disk", disk), ("stateless", stateless)):
                    put_in(node, "ready")
                    transition(node, "deploy", "bench")
                    token = secrets.token_urlsafe(32)
                    Deployment.objects.create(
                        node=node,
                        image=image,
                        token=token,
                        token_sha256=token_hash(token),
                        deadline=timezone.now() + timedelta(minutes=10),
                    )
                    result = netboot.boot(web.port, mac=mac, serial=serial, uuid=uuid, timeout=240)
                    if result.phoned_home_after is None:
                        raise SystemExit(
                            f"the {name} boot never phoned home:\n{result.serial_log[-3000:]}"
                        )
                    times[name].append(result.phoned_home_after)
                    say(f"qemu run {run + 1}: {name} phoned home after {times[name][-1]:.1f} s")
        finally:
            stop_web(web)
            netboot.kill_all()
    return statistics.median(times["disk"]), statistics.median(times["stateless"])
