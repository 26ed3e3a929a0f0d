"""Boot endpoints that machines call: iPXE scripts, GRUB, NoCloud, phone-home.

They take no session or CSRF (machines have neither); what they reveal is limited by
design: an unknown MAC learns nothing, a node's script carries only its own token.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from inventory.choices import NodeState
from inventory.models import NetworkInterface
from inventory.services import fail_node
from inventory.validators import normalise_mac

from . import deployments
from .boot import (
    BootImage,
    BootTarget,
    RenderError,
    render_grub,
    render_ipxe_chain,
    render_ipxe_deploy,
    render_ipxe_local,
    render_ipxe_unknown,
    render_meta_data,
    render_user_data,
)
from .boot import Deployment as BootDeployment
from .models import BootRequest, Deployment, Image

log = logging.getLogger("corral.boot")
IPXE = "text/plain; charset=utf-8"
ARCH = {"x86_64": "x86_64", "i386": "x86_64", "arm64": "arm64"}
FALLBACK_SCRIPT = "#!ipxe\necho Corral cannot build a boot script for this machine.\nexit 1\n"


def boot_base_url(request: HttpRequest) -> str:
    return settings.CORRAL_BOOT_BASE_URL or f"{request.scheme}://{request.get_host()}"


def _client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR") or None


def _lookup(mac: str) -> tuple[str | None, NetworkInterface | None]:
    """The boot NIC with its node, rack and site: one query per boot request."""
    try:
        mac = normalise_mac(mac)
    except ValueError:
        return None, None
    nic = NetworkInterface.objects.select_related("node__rack__site").filter(mac=mac).first()
    return mac, nic


def _target(nic: NetworkInterface, request: HttpRequest) -> BootTarget:
    node = nic.node
    return BootTarget(
        hostname=node.hostname, mac=nic.mac, ip=nic.ip, serial=node.serial,
        arch=ARCH.get(request.GET.get("arch", "x86_64"), "x86_64"),
        site=node.rack.site.slug if node.rack_id else "unracked",
    )


def _boot_inputs(deployment: Deployment, request: HttpRequest) -> tuple[BootImage, BootDeployment]:
    image: Image = deployment.image
    boot_image = BootImage(
        name=image.name, version=image.version, kernel_url=image.kernel_url,
        initrd_url=image.initrd_url, rootfs_url=image.rootfs_url or image.initrd_url,
        cmdline=image.cmdline,
        sha256={"kernel": image.kernel_sha256, "initrd": image.initrd_sha256},
    )
    callback = f"{boot_base_url(request)}/boot/callback"
    return boot_image, BootDeployment(callback_url=callback, token=deployment.token)


@never_cache
@require_GET
def ipxe_script(request: HttpRequest) -> HttpResponse:
    """Per-node iPXE script; every request is recorded for 'last network boot'."""
    mac, nic = _lookup(request.GET.get("mac", ""))
    node = nic.node if nic else None
    answer, state = "unknown", ""
    script = render_ipxe_unknown()
    if node is not None:
        state = node.state
        try:
            target = _target(nic, request)
            deployment = (deployments.waiting_deployment(node)
                          if node.state == NodeState.DEPLOYING else None)
            if deployment is not None:
                image, boot = _boot_inputs(deployment, request)
                script, answer = render_ipxe_deploy(target, image, boot), "deploy"
                Deployment.objects.filter(pk=deployment.pk, boot_started__isnull=True) \
                    .update(boot_started=deployment.created)
            else:
                script, answer = render_ipxe_local(target), "local"
        except RenderError as exc:
            # A node Corral cannot describe safely gets no script; a deploy fails now
            # with the reason instead of waiting for its deadline.
            log.error("cannot render a boot script for %s: %s", node.hostname, exc)
            script, answer = FALLBACK_SCRIPT, "error"
            if node.state == NodeState.DEPLOYING:
                fail_node(node, f"cannot render a boot script: {exc}")
    BootRequest.objects.create(
        node=node, mac=mac or request.GET.get("mac", "")[:17], state=state, answer=answer,
        client=request.headers.get("User-Agent", "")[:200], remote_addr=_client_ip(request))
    return HttpResponse(script, content_type=IPXE)


@require_GET
def chain_script(request: HttpRequest) -> HttpResponse:
    """What DHCP hands iPXE clients: a script can expand ${net0/mac}, a DHCP filename can't."""
    return HttpResponse(render_ipxe_chain(boot_base_url(request)), content_type=IPXE)


def _deploying(request: HttpRequest, mac: str):
    mac, nic = _lookup(mac)
    if nic is None or nic.node.state != NodeState.DEPLOYING:
        return None
    deployment = deployments.waiting_deployment(nic.node)
    if deployment is None:
        return None
    image, boot = _boot_inputs(deployment, request)
    return _target(nic, request), image, boot


@never_cache
@require_GET
def grub_config(request: HttpRequest) -> HttpResponse:
    found = _deploying(request, request.GET.get("mac", ""))
    if found is None:
        return HttpResponse("# not deploying: boot from disk\nexit\n", content_type=IPXE)
    return HttpResponse(render_grub(*found), content_type=IPXE)


@never_cache
@require_GET
def nocloud(request: HttpRequest, mac: str, part: str) -> HttpResponse:
    found = _deploying(request, mac)
    if found is None:
        return HttpResponse("not deploying\n", status=404, content_type=IPXE)
    target, image, boot = found
    body = render_meta_data(target, boot) if part == "meta-data" else \
        render_user_data(target, image, boot)
    return HttpResponse(body, content_type="text/yaml; charset=utf-8")


@csrf_exempt
@require_POST
def callback(request: HttpRequest) -> JsonResponse:
    """Phone-home. 403 for any token that does not open this node's waiting deployment."""
    try:
        report = json.loads(request.body or b"{}")
        if not isinstance(report, dict):
            raise ValueError
    except ValueError:
        return JsonResponse({"detail": "Send a JSON object with your token."}, status=400)
    token = report.get("token")
    try:
        deployment, changed = deployments.phone_home(token, report, _client_ip(request))
    except deployments.CallbackRefused as exc:
        log.warning("phone-home refused from %s: %s", _client_ip(request), exc)
        return JsonResponse({"detail": "Token refused."}, status=403)
    return JsonResponse({"status": "recorded" if changed else "already recorded",
                         "node": deployment.node.hostname, "image": str(deployment.image)})
