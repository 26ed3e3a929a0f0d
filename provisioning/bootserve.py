"""The boot-script decision, shared by the Django view and the WSGI fast path.

`/boot/ipxe` is the one endpoint a whole hall hits at once after a power event, so its
path is lean: one prepared query for the NIC and its node, a rendered local-boot script
cached per node, and boot records batched (provisioning.bootlog). Everything here takes
plain values, not a Django request, so fleet.wsgi can serve it without the middleware
stack (iPXE sends no cookies and needs no session, CSRF or messages).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import psycopg
from django.conf import settings
from django.db import connection

from inventory.choices import NodeState
from inventory.models import NetworkInterface, Node
from inventory.services import fail_node
from inventory.validators import normalise_mac

from . import bootcache, bootlog, deployments
from .boot import (
    BootImage,
    BootTarget,
    RenderError,
    render_ipxe_deploy,
    render_ipxe_local,
    render_ipxe_unknown,
)
from .boot import Deployment as BootDeployment
from .models import Deployment, Image

log = logging.getLogger("corral.boot")
ARCH = {"x86_64": "x86_64", "i386": "x86_64", "arm64": "arm64"}
FALLBACK_SCRIPT = "#!ipxe\necho Corral cannot build a boot script for this machine.\nexit 1\n"


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
    # Node.updated: every transition changes it, so a cached script keyed by the subject
    # can never outlive the node state (or the deployment) it was rendered for.
    updated: object = None


_LOOKUP_SQL: str | None = None


def _lookup_sql() -> str:
    """Compiled once by Django's own compiler: no query compile on every boot request."""
    global _LOOKUP_SQL
    if _LOOKUP_SQL is None:
        query = (
            NetworkInterface.objects.filter(mac="00:00:00:00:00:00")
            .order_by()
            .values_list(
                "node_id",
                "node__hostname",
                "node__serial",
                "node__state",
                "node__rack__site__slug",
                "ip",
                "node__updated",
            )
        )
        _LOOKUP_SQL = query.query.sql_with_params()[0]
    return _LOOKUP_SQL


def lookup(raw_mac: str) -> tuple[str | None, BootSubject | None]:
    try:
        mac = normalise_mac(raw_mac)
    except ValueError:
        return None, None
    copy = bootcache.cache()
    if copy is not None and (cached := copy.get(mac)) is not None:
        return mac, cached
    connection.ensure_connection()
    if connection.vendor == "postgresql":
        # A server-side prepared statement: planned once per connection, not per request.
        with psycopg.Cursor(connection.connection) as cursor:
            row = cursor.execute(_lookup_sql(), [mac], prepare=True).fetchone()
    else:
        with connection.cursor() as cursor:
            cursor.execute(_lookup_sql(), [mac])
            row = cursor.fetchone()
    if row is None:
        return mac, None
    node_id, hostname, serial, state, site, ip, updated = row
    return mac, BootSubject(
        node_id, hostname, serial, state, site or "unracked", mac, str(ip) if ip else None, updated
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


@lru_cache(maxsize=50_000)
def _local_script(subject: BootSubject, arch: str) -> str:
    """A subject is immutable (a changed node is a new subject), so a cached script is
    exactly what the template would render again; the local-vs-deploy decision is still
    made on every request."""
    return render_ipxe_local(target_for(subject, arch))


def prerender(subjects: Iterable[BootSubject]) -> None:
    """Render the local-boot scripts of subjects the node copy just loaded (x86_64, the
    usual case), so a node's first request in a boot storm is answered from memory."""
    for subject in subjects:
        if subject.state != NodeState.DEPLOYING:
            # A script that cannot be rendered is answered (and logged) when the node asks.
            with contextlib.suppress(RenderError):
                _local_script(subject, "x86_64")


_DEPLOY_SCRIPTS: dict[tuple, str] = {}


def _deploy_script(subject: BootSubject, arch: str, base_url: str) -> str | None:
    """The deploy script of the node's waiting deployment, rendered once per subject: the
    deployment (and its token) cannot change without the node's row changing too."""
    key = (subject, arch, base_url)
    script = _DEPLOY_SCRIPTS.get(key)
    if script is None:
        deployment = deployments.waiting_deployment(subject.node_id)
        if deployment is None:  # the deploy task has not created it yet: nothing cached
            return None
        image, boot = boot_inputs(deployment, base_url)
        script = render_ipxe_deploy(target_for(subject, arch), image, boot)
        _remember(key, script)
    return script


def _cached_deploy_script(
    copy: bootcache.SubjectCache, subject: BootSubject, arch: str, base_url: str
) -> str | None:
    key = (subject, arch, base_url)
    script = _DEPLOY_SCRIPTS.get(key)
    if script is None and (deployment := copy.deployment(subject.node_id)) is not None:
        image, boot = boot_inputs(deployment, base_url)
        script = render_ipxe_deploy(target_for(subject, arch), image, boot)
        _remember(key, script)
    return script


def _remember(key: tuple, script: str) -> None:
    if len(_DEPLOY_SCRIPTS) > 50_000:
        _DEPLOY_SCRIPTS.clear()
    _DEPLOY_SCRIPTS[key] = script


def boot_inputs(deployment: Deployment, base_url: str) -> tuple[BootImage, BootDeployment]:
    image: Image = deployment.image
    boot_image = BootImage(
        name=image.name,
        version=image.version,
        kernel_url=image.kernel_url,
        initrd_url=image.initrd_url,
        rootfs_url=image.rootfs_url or image.initrd_url,
        cmdline=image.cmdline,
        sha256={"kernel": image.kernel_sha256, "initrd": image.initrd_sha256},
    )
    return boot_image, BootDeployment(
        callback_url=f"{base_url}/boot/callback", token=deployment.token
    )


def base_url_for(scheme: str, host: str) -> str:
    return settings.CORRAL_BOOT_BASE_URL or f"{scheme}://{host}"


def ipxe_script(
    raw_mac: str, arch: str, base_url: str, client: str, remote_addr: str | None
) -> str:
    """The per-node iPXE script; every request is recorded for 'last network boot'."""
    mac, subject = lookup(raw_mac)
    answer, state = "unknown", ""
    script = render_ipxe_unknown()
    if subject is not None:
        state = subject.state
        try:
            deploy_script = (
                _deploy_script(subject, ARCH.get(arch, "x86_64"), base_url)
                if state == NodeState.DEPLOYING
                else None
            )
            if deploy_script is not None:
                script, answer = deploy_script, "deploy"
            else:
                script, answer = _local_script(subject, ARCH.get(arch, "x86_64")), "local"
        except RenderError as exc:
            # A node Corral cannot describe safely gets no script; a deploy fails now
            # with the reason instead of waiting for its deadline.
            log.error("cannot render a boot script for %s: %s", subject.hostname, exc)
            script, answer = FALLBACK_SCRIPT, "error"
            if state == NodeState.DEPLOYING:
                fail_node(
                    Node.objects.get(pk=subject.node_id), f"cannot render a boot script: {exc}"
                )
    bootlog.record(
        node_id=subject.node_id if subject else None,
        mac=(mac or raw_mac)[:17],
        state=state,
        answer=answer,
        client=client[:200],
        remote_addr=remote_addr,
    )
    return script


def memory_script(
    raw_mac: str, arch: str, base_url: str, client: str, remote_addr: str | None
) -> str | None:
    """The script when memory alone can answer, else None (the caller then runs
    ipxe_script in a thread).

    fleet.asgi calls this on its event loop, where one database query would stall every
    connection of the process (Django refuses ORM calls there anyway). In a boot storm
    nearly every request is a node the per-process copy knows and a script already
    rendered, so answering those without leaving the loop is most of the throughput."""
    copy = bootcache.cache()
    if copy is None or settings.CORRAL_BOOT_LOG_FLUSH_SECONDS <= 0:
        return None
    mac = raw_mac.lower()  # iPXE sends aa:bb:cc:dd:ee:ff, the copy's own spelling
    if (subject := copy.get(mac)) is None:
        try:
            mac = normalise_mac(raw_mac)
        except ValueError:
            return None
        if (subject := copy.get(mac)) is None:
            return None
    arch = ARCH.get(arch, "x86_64")
    try:
        if subject.state == NodeState.DEPLOYING:
            script, answer = _cached_deploy_script(copy, subject, arch, base_url), "deploy"
        else:
            script, answer = _local_script(subject, arch), "local"
    except RenderError:
        return None  # the database path logs it and fails the deploy
    if script is None:
        return None
    bootlog.record(
        node_id=subject.node_id,
        mac=mac,
        state=subject.state,
        answer=answer,
        client=client[:200],
        remote_addr=remote_addr,
    )
    return script


def deploying(raw_mac: str, arch: str, base_url: str):
    """(target, image, boot) for a node that is deploying now, else None."""
    mac, subject = lookup(raw_mac)
    if subject is None or subject.state != NodeState.DEPLOYING:
        return None
    deployment = deployments.waiting_deployment(subject.node_id)
    if deployment is None:
        return None
    image, boot = boot_inputs(deployment, base_url)
    return target_for(subject, arch), image, boot
