"""POST /boot/attest: the challenge a booting node asks for before it quotes.

Like the other /boot/ endpoints it takes no session or CSRF (machines have neither); the
deployment's one-time token is the credential, and a refused token learns nothing.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from core import jsonsafe
from provisioning.bootserver.endpoints import boot_base_url

from . import services

log = logging.getLogger("corral.attestation")


@csrf_exempt
@never_cache
@require_POST
def challenge(request: HttpRequest) -> JsonResponse:
    try:
        body = jsonsafe.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise ValueError
    except jsonsafe.JSONRefused as exc:
        return JsonResponse(exc.as_body(), status=400)
    except ValueError:
        return JsonResponse(
            {"detail": "Send a JSON object: token, ek_public, ek_certificate, ak_public."},
            status=400,
        )
    try:
        answer = services.challenge(body, boot_base_url(request))
    except services.Refused as exc:
        log.warning(
            "attestation challenge refused from %s: %s", request.META.get("REMOTE_ADDR"), exc
        )
        detail = "Token refused." if exc.status == 403 else exc.reason
        return JsonResponse({"detail": detail}, status=exc.status)
    return JsonResponse(answer)
