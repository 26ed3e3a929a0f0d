"""Domain exceptions -> HTTP answers that tell a client what to fix (never a 500).

The domain's refusals all derive from core.errors.DomainConflict and carry their own
status and body, so this names no app; the rest are Django's and the database's.

Kept apart from fleet.api because DRF resolves this lazily, while the permission classes
are imported while rest_framework.views itself is loading.
"""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, InterfaceError, OperationalError
from django.db.models import ProtectedError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import DomainConflict
from fleet.parsers import too_large_detail

# A lost database connection (a restart, a failover, a killed backend) is the server's
# trouble, not the client's, and passes: a 503 with Retry-After says "try again" truthfully.
# The request's transaction was rolled back unless it had already committed; retrying an
# action that did commit is refused with a 409 naming its operation, so nothing runs twice.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 5


def database_unavailable_body() -> dict:
    return {"detail": "The database is unavailable (connection lost); try again shortly."}


def exception_handler(exc, context):
    if isinstance(exc, DATABASE_UNAVAILABLE):
        return Response(
            database_unavailable_body(),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, RequestDataTooBig):  # a multipart form past Django's limit
        return Response({"detail": too_large_detail()}, status=413)
    if isinstance(exc, DjangoValidationError):
        return Response(as_serializer_error(exc), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DomainConflict):  # every app's refusals: their status, their body
        return Response(exc.payload(), status=exc.http_status)
    if isinstance(exc, ProtectedError):
        return Response(
            {
                "detail": "Still in use: remove what refers to it first "
                f"({len(exc.protected_objects)} dependent objects)."
            },
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, IntegrityError):
        return Response(
            {"detail": "Conflicts with an existing record (a unique value is already taken)."},
            status=status.HTTP_409_CONFLICT,
        )
    return drf_exception_handler(exc, context)
