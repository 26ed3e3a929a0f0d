"""The /boot/ endpoints machines call: iPXE scripts, GRUB, NoCloud, phone-home.

They take no session or CSRF (machines have neither); what they reveal is limited by
design: an unknown MAC learns nothing, a node's script carries only its own token.
fleet.asgi and fleet.wsgi answer GET /boot/ipxe before Django sees it; the view here is
the same answer (serve.ipxe_script) for any other way of running Django.
"""

from __future__ import annotations

import logging

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from core import jsonsafe
from core.clientaddr import client_address
from inventory.macs import NOT_A_MAC, is_mac

from .. import deployments, imagestore, overlay, vmedia
from ..boot import render_grub, render_ipxe_chain, render_meta_data, render_user_data
from ..models import Deployment
from . import origin, serve

log = logging.getLogger("corral.boot")
IPXE = "text/plain; charset=utf-8"


def boot_base_url(request: HttpRequest) -> str:
    return serve.base_url_for(request.scheme, request.get_host())


def _client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR") or None


@never_cache
@require_GET
def ipxe_script(request: HttpRequest) -> HttpResponse:
    """Per-node iPXE script (fleet.asgi and fleet.wsgi serve it without middleware)."""
    mac = request.GET.get("mac", "")
    if not is_mac(mac):
        return HttpResponse(f"{NOT_A_MAC}\n", status=400, content_type="text/plain")
    script = serve.ipxe_script(
        mac,
        request.GET.get("arch", "x86_64"),
        boot_base_url(request),
        request.headers.get("User-Agent", ""),
        _client_ip(request),
    )
    return HttpResponse(script, content_type=IPXE)


@require_GET
def chain_script(request: HttpRequest) -> HttpResponse:
    """What DHCP hands iPXE clients: a script can expand ${net0/mac}, a DHCP filename can't."""
    return HttpResponse(render_ipxe_chain(boot_base_url(request)), content_type=IPXE)


def _deploying(request: HttpRequest, mac: str):
    return serve.deploying(mac, request.GET.get("arch", "x86_64"), boot_base_url(request))


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
    target, image, phone_home = found
    body = (
        render_meta_data(target, phone_home)
        if part == "meta-data"
        else render_user_data(target, image, phone_home)
    )
    return HttpResponse(body, content_type="text/yaml; charset=utf-8")


def json_object(request: HttpRequest, expected: str) -> dict | JsonResponse:
    """The POSTed JSON object, or the 400 to answer: what a machine's POST to /boot/ is
    read with (phone-home here, the attestation challenge). `expected` names what to send."""
    try:
        body = jsonsafe.loads(request.body or b"{}")
    except jsonsafe.JSONRefused as exc:
        return JsonResponse(exc.as_body(), status=400)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return JsonResponse({"detail": f"Send a JSON object {expected}."}, status=400)
    return body


@csrf_exempt
@require_POST
def callback(request: HttpRequest) -> JsonResponse:
    """Phone-home. 403 for any token that does not open this node's waiting deployment,
    and for a good token from an address that is not the node's (origin), saying so."""
    report = json_object(request, "with your token")
    if isinstance(report, JsonResponse):
        return report
    token = report.get("token")
    address = client_address(request)  # behind a trusted proxy, the address it saw
    try:
        deployment, changed = deployments.phone_home(token, report, address)
    except deployments.CallbackRefused as exc:
        return _refused(exc, "phone-home", address)
    return JsonResponse(
        {
            "status": ("failure recorded" if report.get("failed") else "recorded")
            if changed
            else "already recorded",
            "node": deployment.node.hostname,
            "image": str(deployment.image),
        }
    )


@never_cache
@require_GET
def boot_iso(request: HttpRequest, deployment: int, key: str) -> HttpResponse:
    """A virtual-media deploy's ISO, to its node's BMC while the deployment waits
    (provisioning/vmedia.py); 404 for anything else, the log saying why."""
    found = Deployment.objects.select_related("node__bmc").filter(pk=deployment).first()
    address = client_address(request)
    refused = vmedia.serve_refusal(found, key, address)
    if refused is None:
        try:  # the eject sweep may have deleted it since
            iso = vmedia.iso_path(deployment).open("rb")
        except FileNotFoundError:
            refused = "the boot image was deleted"
    if refused is not None:
        log.warning("boot ISO %s not served to %s: %s", deployment, address, refused)
        return HttpResponse("No such boot image.\n", status=404, content_type=IPXE)
    return FileResponse(iso, content_type="application/x-iso9660-image")


@csrf_exempt
@require_POST
def node_overlay(request: HttpRequest) -> HttpResponse:
    """A stateless node's own files, laid over its root image (provisioning/overlay.py);
    403 for a token that opens no waiting deployment, or from another address."""
    body = json_object(request, "with your token")
    if isinstance(body, JsonResponse):
        return body
    address = client_address(request)
    try:
        tar = overlay.for_token(body.get("token"), address, boot_base_url(request))
    except deployments.CallbackRefused as exc:
        return _refused(exc, "overlay", address)
    return HttpResponse(tar, content_type="application/gzip")


def _refused(exc: deployments.CallbackRefused, what: str, address: str | None) -> JsonResponse:
    """403: from an address that is not the node's, saying so (origin); any other refusal
    reveals nothing. The log says which."""
    if isinstance(exc, deployments.WrongAddress):
        log.warning("%s", exc)
        return JsonResponse({"detail": origin.answer(exc.address)}, status=403)
    log.warning("%s refused from %s: %s", what, address, exc)
    return JsonResponse({"detail": "Token refused."}, status=403)


@require_GET
def image_file(request: HttpRequest, sha256: str) -> FileResponse:
    """An artifact of a published image, from the image store (imagestore): what the
    production server's static files answer at the same URL, for any other way of
    running Django."""
    path = imagestore.path_of(sha256)
    if path is None or not path.is_file():
        raise Http404("no kept image artifact has that sha256")
    return FileResponse(path.open("rb"), content_type="application/octet-stream")
