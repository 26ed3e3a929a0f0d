"""ETag / If-Match on updates, so a ticketing system does not overwrite a technician.

A GET of one object answers with an `ETag` (a hash of exactly what it returned). A PUT or
PATCH carrying `If-Match` is applied only if the object still reads the same: its row is
locked, read again, and hashed; a different hash is a 412 with the current ETag, and
nothing is written. Without `If-Match` an update applies as before (last writer wins), so
existing clients keep working; the schema declares the header and the 412.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response

IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="The ETag of the object as you last read it: the update is refused with "
    "412 if it changed since (someone else wrote it).",
)
# On a ModelViewSet: declare If-Match on PUT and PATCH.
CONDITIONAL = extend_schema_view(
    update=extend_schema(parameters=[IF_MATCH]),
    partial_update=extend_schema(parameters=[IF_MATCH]),
)


class PreconditionFailed(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_code = "precondition_failed"

    def __init__(self, current: str):
        super().__init__(
            {
                "detail": "It changed since you read it (If-Match does not match its ETag): "
                "read it again and reapply your change.",
                "etag": current,
            }
        )


def etag_of(data: Any) -> str:
    body = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


def matches(header: str, current: str) -> bool:
    """RFC 9110 If-Match: `*`, or one of a list of strong tags (a weak tag never matches)."""
    tags = [tag.strip() for tag in header.split(",")]
    return "*" in tags or current in tags


def guarded(view: Any, apply: Callable[[], Response]) -> Response:
    """Run the update `apply` under the object's row lock if the request has If-Match,
    after checking it; the answer carries the new ETag."""
    header = view.request.headers.get("If-Match")
    with transaction.atomic():
        if header is not None:
            obj = view.get_object()
            list(type(obj).objects.select_for_update().filter(pk=obj.pk).values_list("pk"))
            current = etag_of(view.get_serializer(view.get_object()).data)
            if not matches(header, current):
                raise PreconditionFailed(current)
        response = apply()
    if response.status_code == 200 and isinstance(response.data, dict):
        response["ETag"] = etag_of(response.data)
    return response


class ConditionalUpdates:
    """For a ModelViewSet: ETag on retrieve, If-Match on update (PUT and PATCH)."""

    def retrieve(self, request, *args, **kwargs):
        response = super().retrieve(request, *args, **kwargs)  # type: ignore[misc]
        response["ETag"] = etag_of(response.data)
        return response

    def update(self, request, *args, **kwargs):
        return guarded(
            self, lambda: super(ConditionalUpdates, self).update(request, *args, **kwargs)
        )  # type: ignore[misc]
