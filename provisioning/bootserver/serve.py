"""The two ways /boot/ipxe is answered, and the lookup the other boot endpoints share.

`/boot/ipxe` is the one endpoint a whole hall hits at once after a power event, so its
path is lean: the node found in the per-process copy (bootserver.cache) or with one
prepared query, scripts rendered once per node (bootserver.answers), boot records batched
(bootserver.records). Everything here takes plain values, not a Django request, so
fleet.asgi and fleet.wsgi serve it without the middleware stack (iPXE sends no cookies
and needs no session, CSRF or messages).

- memory_script: memory only (an enrolled node or an unknown MAC), or None; fleet.asgi
  calls it on its event loop.
- ipxe_script: may ask the database; the Django view, fleet.wsgi and fleet.asgi's thread
  pool call it.

Both end in answers.answer, so a node is answered alike whichever path serves it.
"""

from __future__ import annotations

import psycopg
from django.conf import settings
from django.db import connection

from inventory.choices import NodeState
from inventory.models import NetworkInterface
from inventory.validators import normalise_mac

from .. import deployments
from ..boot import BootImage, BootTarget, PhoneHome, RenderError, render_cmdline
from ..models import Deployment
from . import cache
from .answers import FIELDS, BootSubject, answer, boot_inputs, subject_from_row, target_for

_LOOKUP_SQL: str | None = None


def _lookup_sql() -> str:
    """Compiled once by Django's own compiler: no query compile on every boot request."""
    global _LOOKUP_SQL
    if _LOOKUP_SQL is None:
        query = (
            NetworkInterface.objects.filter(mac="00:00:00:00:00:00").order_by().values_list(*FIELDS)
        )
        _LOOKUP_SQL = query.query.sql_with_params()[0]
    return _LOOKUP_SQL


def lookup(raw_mac: str) -> tuple[str | None, BootSubject | None]:
    """(normalised MAC, its node's subject): from the node copy when it knows the MAC,
    else from the database. (None, None) for a malformed MAC."""
    try:
        mac = normalise_mac(raw_mac)
    except ValueError:
        return None, None
    copy = cache.cache()
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
    return mac, subject_from_row(row) if row is not None else None


def base_url_for(scheme: str, host: str) -> str:
    return settings.CORRAL_BOOT_BASE_URL or f"{scheme}://{host}"


def ipxe_script(
    raw_mac: str, arch: str, base_url: str, client: str, remote_addr: str | None
) -> str:
    """The per-node iPXE script, asking the database for whatever memory does not hold.
    The front doors refuse a `raw_mac` that is not a MAC before calling this."""
    mac, found = lookup(raw_mac)
    return answer(
        found,
        mac or "",
        arch,
        base_url,
        deployments.waiting_deployment,
        client,
        remote_addr,
        settle=True,
        reboot=deployments.reboot,
    )


def memory_script(
    raw_mac: str, arch: str, base_url: str, client: str, remote_addr: str | None
) -> str | None:
    """The script when memory alone can answer, else None (the caller then runs
    ipxe_script in a thread).

    fleet.asgi calls this on its event loop, where one database query would stall every
    connection of the process (Django refuses ORM calls there anyway); so it also needs
    boot records to be batched, not written per request. In a boot storm nearly every
    request is a node the copy knows and a script already rendered, so answering those
    without leaving the loop is most of the throughput. A MAC a loaded copy does not hold
    is answered unknown here too (bootserver.cache says how a node enrolled a moment ago
    is still found): on a bad day a fifth of a storm can be machines nobody enrolled."""
    copy = cache.cache()
    if copy is None or settings.CORRAL_BOOT_LOG_FLUSH_SECONDS <= 0:
        return None
    mac = raw_mac.lower()  # iPXE sends aa:bb:cc:dd:ee:ff, the copy's own spelling
    if (found := copy.get(mac)) is None:
        try:
            mac = normalise_mac(raw_mac)
        except ValueError:
            return None
        if (found := copy.get(mac)) is None and not copy.unknown(mac):
            return None
    return answer(found, mac, arch, base_url, copy.deployment, client, remote_addr, settle=False)


def deploying(
    raw_mac: str, arch: str, base_url: str
) -> tuple[BootTarget, BootImage, PhoneHome] | None:
    """(target, image, phone-home) of a node that is deploying now, else None: what the
    GRUB and NoCloud endpoints render."""
    _, found = lookup(raw_mac)
    if found is None or found.state != NodeState.DEPLOYING:
        return None
    deployment = deployments.waiting_deployment(found.node_id)
    if deployment is None:
        return None
    return target_for(found, arch), *boot_inputs(deployment, base_url)


def deploy_load_options(deployment_id: int, base_url: str) -> str:
    """What the kernel of a UKI deploy measures as its load options (PCR 9): iPXE's image
    name, `uki` (templates/provisioning/boot/deploy.ipxe), then the command line rendered
    for this deployment served from base_url; '' if it cannot be rendered."""
    deployment = Deployment.objects.select_related("image").get(pk=deployment_id)
    nic = (
        NetworkInterface.objects.filter(node_id=deployment.node_id)
        .order_by("-boot", "pk")
        .values_list("mac", flat=True)
        .first()
    )
    _, found = lookup(nic or "")
    if found is None:
        return ""
    image, phone_home = boot_inputs(deployment, base_url)
    try:
        return f"uki {render_cmdline(target_for(found, 'x86_64'), image, phone_home)}"
    except RenderError:
        return ""
