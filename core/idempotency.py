"""`Idempotency-Key` for writes from ticketing systems: the same write sent twice (a retry
after a timeout, a replayed queue) is applied once and answered twice.

The key is recorded in the transaction of the write itself, so a write and its key commit
or vanish together. A second request with the key waits on the unique index while the
first is in flight, then replays its answer. Only successful answers are kept: a refused
write (409, 400) may be sent again with the same key once the cause is fixed.

In core because every app's API uses it (RMA cases, node and rack actions, enrolment and
imports); a view hands its write to `idempotent()` and declares `IDEMPOTENCY` in its schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from .models import IdempotencyRecord

HEADER = "Idempotency-Key"
MAX_KEY = 255
# Answer headers a client acts on, replayed with the body: where the new object is to be
# polled (an import's operation) and the version it was written as.
REPLAYED_HEADERS = ("Location", "ETag")

IDEMPOTENCY = OpenApiParameter(
    HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="Send the same write twice, applied once: the second is answered as the "
    "first (`Idempotent-Replayed: true`). The same key with another method, path or body "
    "is a 422. Keys are per caller.",
)


def fingerprint(request: Request) -> str:
    digest = hashlib.sha256()
    digest.update(request.method.encode() + b" " + request.path.encode() + b"\n")
    if request.content_type.startswith("multipart/form-data"):
        _digest_form(request, digest)
    else:
        digest.update(request.body if request.body else b"")
    return digest.hexdigest()


def _digest_form(request: Request, digest: hashlib._Hash) -> None:
    """A multipart body by what it holds, not its bytes: a client that builds the upload
    again for its retry picks a new boundary, and the bytes (a 20 MiB CSV) are past
    Django's limit on reading a body whole."""
    for name, values in sorted(request.data.lists()):
        for value in values:
            digest.update(b"\0field\0" + name.encode() + b"\0")
            if isinstance(value, UploadedFile):
                digest.update((value.name or "").encode() + b"\0")
                for chunk in value.chunks():
                    digest.update(chunk)
                value.seek(0)  # the view reads it next
            else:
                digest.update(str(value).encode())


def idempotent(request: Request, actor: str, handler: Callable[[], Response]) -> Response:
    key = request.headers.get(HEADER, "").strip()
    if not key:
        return handler()
    if len(key) > MAX_KEY:
        return Response(
            {"detail": f"{HEADER} is longer than {MAX_KEY} characters."},
            status=status.HTTP_400_BAD_REQUEST,
        )
    mine = fingerprint(request)
    with transaction.atomic():
        try:
            with transaction.atomic():
                record = IdempotencyRecord.objects.create(
                    actor=actor, key=key, fingerprint=mine, status_code=0
                )
        except IntegrityError:
            return _replay(actor, key, mine)
        response = handler()
        if not status.is_success(response.status_code):
            transaction.set_rollback(True)
            return response
        record.status_code = response.status_code
        record.body = response.data
        record.headers = {h: response[h] for h in REPLAYED_HEADERS if response.has_header(h)}
        record.save(update_fields=["status_code", "body", "headers"])
    return response


def _replay(actor: str, key: str, mine: str) -> Response:
    record = IdempotencyRecord.objects.get(actor=actor, key=key)
    if record.fingerprint != mine:
        return Response(
            {
                "detail": f"This {HEADER} was already used for a different request "
                "(another method, path or body); use a new key for a new write."
            },
            status=status.HTTP_422_UNPROCESSABLE_ENTITY,
        )
    headers = {**record.headers, "Idempotent-Replayed": "true"}
    return Response(record.body, status=record.status_code, headers=headers)
