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

from provisioning.bootserver.endpoints import boot_base_url, json_object

from . import services

log = logging.getLogger("corral.attestation")


@csrf_exempt
@never_cache
@require_POST
def challenge(request: HttpRequest) -> JsonResponse:
    body = json_object(request, "of token, ek_public, ek_certificate and ak_public")
    if isinstance(body, JsonResponse):
        return body
    try:
        answer = services.challenge(body, boot_base_url(request))
    except services.Refused as exc:
        log.warning(
            "attestation challenge refused from %s: %s", request.META.get("REMOTE_ADDR"), exc
        )
        detail = "Token refused." if exc.status == 403 else exc.reason
        return JsonResponse({"detail": detail}, status=exc.status)
    return JsonResponse(answer)
