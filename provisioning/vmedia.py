"""Deploys through the BMC's virtual media, where a site has no PXE (docs/boot-modes.md).

`deploy()` asks `how_to_boot` whether this deploy boots from the network or from a CD:
the site's `boot_media` policy, and whether the node's BMC has a virtual CD at all. For
a CD, `prepare` builds the deploy's own ISO (boot/iso.py: GRUB, the image's kernel and
initrd, the deployment's token in its grub.cfg) from the image's kernel and initrd,
fetched under the egress policy and checked against their sha256, into
CORRAL_VMEDIA_DIR. The BMC fetches it from `/boot/vmedia/<deployment>/<key>.iso`: the key
is an HMAC of the deployment's token hash, and the ISO is served only while its
deployment waits for phone-home, and only to its node's BMC address (`serve_refusal`).

Once the deployment ends (phoned home, failed, superseded), `eject_ended` takes the CD
out and deletes the ISO. The sweep runs it (provisioning.tasks.eject_media), so a lost
message or a BMC that was down at the time loses nothing: the row says what is left.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import tempfile
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from celery import current_app
from django.conf import settings
from django.utils import timezone

from core import egress, egress_http
from inventory.choices import BootMedia
from inventory.models import NetworkInterface, Node, Site
from inventory.operations import PUBLISH_ERRORS

from . import imagestore
from .boot.iso import build_boot_iso, render_iso_grub
from .boot.types import RenderError
from .bootserver.answers import FIELDS, boot_inputs, subject_from_row, target_for
from .dhcp import subnet_of
from .drivers import BMCError, BMCFatalError, BMCUnsupportedError, Driver, get_driver
from .models import Deployment
from .models.deployments import DeploymentStatus
from .runner import bmc_io
from .services import bmc_settings

log = logging.getLogger(__name__)
PXE, MEDIA = "pxe", "virtual_media"
# A BMC that has not answered an eject for this long is not asked again.
GIVE_UP = timedelta(days=1)


def site_policy(node: Node) -> str:
    rack = node.rack
    return rack.site.boot_media if rack is not None else BootMedia.PXE


def how_to_boot(node: Node, driver: Driver) -> tuple[str, str]:
    """(PXE or MEDIA, a note for the progress line). BMCFatalError where the site requires
    virtual media and the BMC has none, with the BMC's own answer."""
    policy = site_policy(node)
    if policy == BootMedia.PXE:
        return PXE, ""
    try:
        with bmc_io():
            driver.media.inserted()  # finds the virtual CD, or says there is none
    except BMCUnsupportedError as exc:
        if policy == BootMedia.VIRTUAL_MEDIA:
            site = node.rack.site if node.rack is not None else "its site"
            raise BMCFatalError(
                f"{site} deploys through virtual media only, and {exc}", address=exc.address
            ) from None
        return PXE, f"no virtual media ({exc}): network boot"
    return MEDIA, ""


def media_key(deployment: Deployment) -> str:
    """The ISO URL's secret part: unguessable, and tied to this deployment's token."""
    message = f"vmedia:{deployment.pk}:{deployment.token_sha256}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()[:40]


def iso_path(deployment_id: int) -> Path:
    return Path(settings.CORRAL_VMEDIA_DIR) / f"deploy-{deployment_id}.iso"


def base_url() -> str:
    """Where the node phones home from the ISO (a worker has no request to take it from)."""
    return settings.CORRAL_BOOT_BASE_URL or settings.CORRAL_PUBLIC_URL.rstrip("/")


def media_url(deployment: Deployment) -> str:
    """Where the BMC fetches the ISO: on its management network, maybe another address."""
    base = settings.CORRAL_VMEDIA_BASE_URL or base_url()
    return f"{base}/boot/vmedia/{deployment.pk}/{media_key(deployment)}.iso"


def prepare(deployment: Deployment, node: Node) -> str:
    """Build the deployment's ISO; its URL. BMCFatalError (the deploy fails) naming what
    went wrong: an artifact that is not what the image says, no NIC, no GRUB tools."""
    address = node.bmc.address if hasattr(node, "bmc") else None
    row = (
        NetworkInterface.objects.filter(node=node).order_by("-boot", "pk").values_list(*FIELDS)
    ).first()
    if row is None:
        raise BMCFatalError(f"{node} has no network interface to boot with", address=address)
    subject = subject_from_row(row)  # as the boot server reads a node (bootserver/answers.py)
    image, phone_home = boot_inputs(deployment, base_url())
    Path(settings.CORRAL_VMEDIA_DIR).mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        with tempfile.TemporaryDirectory(prefix="corral-vmedia-") as tmp:
            kernel, initrd = Path(tmp) / "vmlinuz", Path(tmp) / "initrd"
            _fetch("kernel", image.kernel_url, image.sha256["kernel"], kernel)
            _fetch("initrd", image.initrd_url, image.sha256["initrd"], initrd)
            target = target_for(subject, "x86_64")
            # Its address, where a subnet of its site holds it: no DHCP needed at all.
            site_id = node.rack.site_id if node.rack is not None else None
            grub = render_iso_grub(target, image, phone_home, subnet_of(site_id, target.ip))
            build_boot_iso(kernel, initrd, grub, iso_path(deployment.pk))
    except (RenderError, egress_http.DownloadRefused) as exc:
        raise BMCFatalError(f"the boot ISO of {deployment.image} was not built: {exc}") from None
    return media_url(deployment)


def _fetch(name: str, url: str, sha256: str, dest: Path) -> None:
    """The artifact into `dest`, checked: from the image store when publishing kept it
    there (the worker shares the folder; no download, not even from Corral's own server),
    else from its URL under the egress policy."""
    kept = imagestore.path_of(sha256)
    if kept is not None and kept.is_file():
        digest = hashlib.sha256()
        with kept.open("rb") as source, dest.open("wb") as out:
            while chunk := source.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha256:  # the disk under the store: said, never served
            raise egress_http.DownloadRefused(
                f"the {name} kept at {kept} has sha256 {digest.hexdigest()}, not {sha256}"
            )
        return
    with dest.open("wb") as out:
        got, _ = egress_http.sha256_of(
            url, egress.IMAGE, settings.CORRAL_IMAGE_MAX_BYTES, "CORRAL_IMAGE_MAX_BYTES", out.write
        )
    if got != sha256:
        raise egress_http.DownloadRefused(
            f"the {name} at {url} has sha256 {got}, not the image's {sha256}"
        )


def serve_refusal(deployment: Deployment | None, key: str, remote_addr: str | None) -> str | None:
    """Why the ISO is not served to this request, or None: a wrong key, a deployment no
    longer waiting, or a requester that is not the node's BMC."""
    if deployment is None or not hmac.compare_digest(key, media_key(deployment)):
        return "no such boot image"
    if deployment.status != DeploymentStatus.WAITING:
        return f"deployment {deployment.pk} is {deployment.status}"
    bmc_address = deployment.node.bmc.address.strip()
    if remote_addr is None or not _same_host(remote_addr, bmc_address):
        return f"only the BMC of {deployment.node} ({bmc_address}) fetches its boot image"
    return None


def _same_host(remote_addr: str, bmc_address: str) -> bool:
    """Whether the request comes from the BMC: its address, or any its name resolves to."""
    try:
        remote = egress.canonical(ipaddress.ip_address(remote_addr))
    except ValueError:
        return False
    # A bare "host:port" is read as the host of a URL without its scheme.
    spelled = bmc_address if "://" in bmc_address else f"//{bmc_address}"
    try:
        host = urlsplit(spelled).hostname or ""
    except ValueError:
        return False
    found = egress.literal(host)
    if found is not None:
        return egress.canonical(found) == remote
    try:
        return any(egress.canonical(one) == remote for one, _ in egress.resolve(host))
    except OSError:
        return False


def eject_soon(node: Node) -> None:
    """Ask the node's site worker (which shares the ISO folder with the site's web servers)
    to eject now, rather than wait for the sweep, which does if this message is lost."""
    site = node.rack.site.slug if node.rack is not None else None
    try:
        current_app.send_task(
            "provisioning.tasks.eject_media", kwargs={"site": site}, queue=node.queue
        )
    except PUBLISH_ERRORS as exc:
        log.info("eject not sent now (%s); the sweep will", exc)


UNRACKED = ""  # eject_ended's `site` for nodes in no rack (the default queue is theirs)


def _ended():
    return Deployment.objects.exclude(status=DeploymentStatus.WAITING).filter(
        media_url__gt="", media_ejected__isnull=True
    )


def sweep() -> list[str]:
    """Beat: each site with an ended deploy's CD still inserted is sent the eject on its own
    queue (only its workers reach its BMCs, and they share its web servers' ISO folder);
    unracked nodes' are ejected here. The sites sent to."""
    ended = _ended()
    slugs = sorted(
        set(
            ended.filter(node__rack__isnull=False)
            .values_list("node__rack__site__slug", flat=True)
            .distinct()
        )
    )
    for slug in slugs:
        try:
            current_app.send_task(
                "provisioning.tasks.eject_media",
                kwargs={"site": slug},
                queue=Site.queue_for_slug(slug),
            )
        except PUBLISH_ERRORS as exc:
            log.info("eject of site %s not sent (%s); the next sweep will", slug, exc)
    if ended.filter(node__rack__isnull=True).exists():
        eject_ended(UNRACKED)
    return slugs


def eject_ended(site: str | None = None, limit: int = 100) -> int:
    """Take the CD out of the BMCs of deployments that ended with one inserted (of one
    site's nodes, of unracked ones (UNRACKED), or of all), and delete their ISOs; how many
    were done. A BMC that does not answer is tried again by the next sweep; the ISO goes
    at once (its token is no good any more). After a day of no answer it is given up on,
    the log saying so: a BMC gone for good must not be asked every minute for ever, nor
    hold up the others."""
    done = 0
    ended = _ended()
    if site == UNRACKED:
        ended = ended.filter(node__rack__isnull=True)
    elif site is not None:
        ended = ended.filter(node__rack__site__slug=site)
    for deployment in ended.select_related("node__bmc").order_by("-pk")[:limit]:
        iso_path(deployment.pk).unlink(missing_ok=True)
        try:
            _eject(deployment)
        except BMCError as exc:
            if timezone.now() - deployment.created < GIVE_UP:
                log.info("deployment %s: its boot ISO is not ejected yet: %s", deployment.pk, exc)
                continue
            log.warning("deployment %s: gave up ejecting its boot ISO: %s", deployment.pk, exc)
        Deployment.objects.filter(pk=deployment.pk).update(media_ejected=timezone.now())
        done += 1
    return done


def _eject(deployment: Deployment) -> None:
    node = deployment.node
    if not hasattr(node, "bmc"):
        return  # its BMC was removed: nothing left to ask
    with get_driver(bmc_settings(node)) as driver, bmc_io():
        if driver.media.inserted() == deployment.media_url:
            driver.media.eject()  # another deploy's ISO stays where it is
