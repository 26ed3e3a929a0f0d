"""What a booting machine is answered: decided here once, for both ways of finding it.

A MAC is found either in the per-process node copy (bootserver.cache, read on the event
loop by fleet.asgi) or in the database (bootserver.serve, in a thread). Both build the same
BootSubject from the same FIELDS and call the same answer(): a deploying node with a
waiting deployment gets its deploy script, every other known node boots its disk, an
unknown MAC learns nothing, and every answer is recorded (bootserver.records).

Scripts are rendered once per subject and kept. A subject is immutable and carries
Node.updated, which every transition changes, so a kept script can never outlive the node
state, or the deployment (it cannot change without the node's row changing too), it was
rendered for; the local-or-deploy decision is still made on every request.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from inventory.choices import NodeState
from inventory.lifecycle import states_accepting
from inventory.models import Node
from inventory.services import fail_node

from .. import imagestore
from ..boot import (
    BootImage,
    BootTarget,
    PhoneHome,
    RenderError,
    render_ipxe_deploy,
    render_ipxe_local,
    render_ipxe_unknown,
)
from ..metrics import BOOT_ANSWERS
from ..models import Deployment
from . import records

log = logging.getLogger("corral.boot")
ARCH = {"x86_64": "x86_64", "i386": "x86_64", "arm64": "arm64"}
FALLBACK_SCRIPT = "#!ipxe\necho Corral cannot build a boot script for this machine.\nexit 1\n"
# The NetworkInterface columns a subject is read from, in subject_from_row's order: the
# node copy and the database lookup both select exactly these.
FIELDS = (
    "mac",
    "node_id",
    "node__hostname",
    "node__serial",
    "node__state",
    "node__rack__site__slug",
    "ip",
    "node__updated",
    "node__stateless",
)
DeploymentOf = Callable[[int], Deployment | None]
# The states whose stateless nodes are deployed again by their own boot (`rebooted`).
REBOOTS = states_accepting("rebooted")


@dataclass(frozen=True)
class BootSubject:
    """The few facts a boot script needs, read in one narrow query."""

    node_id: int
    hostname: str
    serial: str
    state: str
    site: str
    mac: str
    ip: str | None
    # Node.updated: every transition changes it, so a script kept for the subject can
    # never outlive the node state (or the deployment) it was rendered for.
    updated: object = None
    # Runs its image from RAM: in a state a reboot moves, its boot is a deploy again.
    stateless: bool = False

    @property
    def reboots(self) -> bool:
        """Whether this boot request starts a deploy of its image (deployments.reboot)."""
        return self.stateless and self.state in REBOOTS


def subject_from_row(row: tuple) -> BootSubject:
    """A subject from one row of FIELDS."""
    mac, node_id, hostname, serial, state, site, ip, updated, stateless = row
    return BootSubject(
        node_id,
        hostname,
        serial,
        state,
        site or "unracked",
        mac,
        str(ip) if ip else None,
        updated,
        bool(stateless),
    )


def target_for(subject: BootSubject, arch: str) -> BootTarget:
    return BootTarget(
        hostname=subject.hostname,
        mac=subject.mac,
        ip=subject.ip,
        serial=subject.serial,
        arch=ARCH.get(arch, "x86_64"),
        site=subject.site,
    )


def boot_inputs(deployment: Deployment, base_url: str) -> tuple[BootImage, PhoneHome]:
    """The renderers' inputs for a deployment (its image loaded) served from base_url."""
    image = deployment.image
    # Corral's own copy once publishing kept it, while a store is set (one unset since
    # serves nothing), else the artifact's URL.
    kept = image.stored and imagestore.folder() is not None

    def where(url: str, sha256: str) -> str:
        return imagestore.url(base_url, sha256) if kept and url else url

    boot_image = BootImage(
        name=image.name,
        version=image.version,
        kernel_url=where(image.kernel_url, image.kernel_sha256),
        initrd_url=where(image.initrd_url, image.initrd_sha256),
        rootfs_url=where(image.rootfs_url, image.rootfs_sha256)
        or where(image.initrd_url, image.initrd_sha256),
        cmdline=image.cmdline,
        sha256={"kernel": image.kernel_sha256, "initrd": image.initrd_sha256}
        | ({"rootfs": image.rootfs_sha256} if image.rootfs_sha256 else {}),
        uki_url=where(image.uki_url, image.uki_sha256),
        mode=image.deploy_mode,
    )
    return boot_image, PhoneHome(callback_url=f"{base_url}/boot/callback", token=deployment.token)


@lru_cache(maxsize=50_000)
def local_script(subject: BootSubject, arch: str) -> str:
    return render_ipxe_local(target_for(subject, arch))


@lru_cache(maxsize=1)
def unknown_script() -> str:
    return render_ipxe_unknown()


_DEPLOY_SCRIPTS: dict[tuple, str] = {}


def deploy_script(
    subject: BootSubject, arch: str, base_url: str, deployment_of: DeploymentOf
) -> str | None:
    """The deploy script of the node's waiting deployment, rendered once per subject;
    None while `deployment_of` (the node copy or the database) knows no such deployment."""
    key = (subject, arch, base_url)
    script = _DEPLOY_SCRIPTS.get(key)
    if script is None:
        deployment = deployment_of(subject.node_id)
        if deployment is None:
            return None
        script = render_ipxe_deploy(target_for(subject, arch), *boot_inputs(deployment, base_url))
        if len(_DEPLOY_SCRIPTS) > 50_000:
            _DEPLOY_SCRIPTS.clear()
        _DEPLOY_SCRIPTS[key] = script
    return script


def prerender(subjects: Iterable[BootSubject]) -> None:
    """Render the local-boot scripts of subjects the node copy just loaded (x86_64, the
    usual case), so a node's first request in a boot storm is answered from memory."""
    for one in subjects:
        if one.state != NodeState.DEPLOYING and not one.reboots:
            # A script that cannot be rendered is answered (and logged) when the node asks.
            with contextlib.suppress(RenderError):
                local_script(one, "x86_64")


def _reboot_script(
    found: BootSubject, arch: str, base_url: str, deployment_of: DeploymentOf, reboot: DeploymentOf
) -> tuple[str, str]:
    """(script, kind) for a stateless node's own boot: a deploy of its image again, or
    the deploy another request started a moment before; its disk (there is none) only when
    neither is there (its image is gone: the node page says which deploy it last ran)."""
    kind, deployment = "reboot", reboot(found.node_id)
    if deployment is None:
        kind, deployment = "deploy", deployment_of(found.node_id)
    if deployment is None:
        return local_script(found, arch), "local"
    return render_ipxe_deploy(target_for(found, arch), *boot_inputs(deployment, base_url)), kind


def answer(
    found: BootSubject | None,
    mac: str,
    arch: str,
    base_url: str,
    deployment_of: DeploymentOf,
    client: str,
    remote_addr: str | None,
    *,
    settle: bool,
    reboot: DeploymentOf | None = None,
) -> str | None:
    """The script for a machine that asked with `mac`, recorded: the one decision.

    What memory cannot settle it leaves to the database (settle=False: None, nothing
    recorded): a deploying node whose deployment the copy has not loaded, a stateless node
    whose boot is a deploy again (`reboot`, deployments.reboot: it writes), and a script
    that does not render. The database path settles them (settle=True): the first boots
    its disk (the deploy task has not created the deployment yet); the second gets its
    image again; the third gets FALLBACK_SCRIPT and its deploy fails now, with the reason,
    not at its deadline.
    """
    if found is None:
        script, kind, state = unknown_script(), "unknown", ""
    else:
        arch, state = ARCH.get(arch, "x86_64"), found.state
        try:
            if found.reboots and not settle:
                return None
            script = (
                deploy_script(found, arch, base_url, deployment_of)
                if state == NodeState.DEPLOYING
                else None
            )
            if script is not None:
                kind = "deploy"
            elif found.reboots and reboot is not None:
                script, kind = _reboot_script(found, arch, base_url, deployment_of, reboot)
            elif state == NodeState.DEPLOYING and not settle:
                return None
            else:
                script, kind = local_script(found, arch), "local"
        except RenderError as exc:
            if not settle:
                return None
            log.error("cannot render a boot script for %s: %s", found.hostname, exc)
            script, kind = FALLBACK_SCRIPT, "error"
            if state == NodeState.DEPLOYING:
                fail_node(Node.objects.get(pk=found.node_id), f"cannot render a boot script: {exc}")
    BOOT_ANSWERS.labels(kind).inc()
    records.record(
        node_id=found.node_id if found else None,
        mac=mac[:17],
        state=state,
        answer=kind,
        client=client[:200],
        remote_addr=remote_addr,
    )
    return script
