"""`Idempotency-Key` for writes from ticketing systems: the same write sent twice (a retry
after a timeout, a replayed queue) is applied once and answered twice.

The key is recorded in the transaction of the write itself, so a write and its key commit
or vanish together. A second request with the key waits on the unique index while the
first is in flight, then replays its answer. Only successful answers are kept: a refused
write (409, 400) may be sent again with the same key once the cause is fixed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from django.db import IntegrityError, transaction
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from ..models import IdempotencyRecord

HEADER = "Idempotency-Key"
MAX_KEY = 255


def fingerprint(request: Request) -> str:
    digest = hashlib.sha256()
    digest.update(request.method.encode() + b" " + request.path.encode() + b"\n")
    digest.update(request.body if request.body else b"")
    return digest.hexdigest()


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
        record.save(update_fields=["status_code", "body"])
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
    return Response(record.body, status=record.status_code, headers={"Idempotent-Replayed": "true"})
