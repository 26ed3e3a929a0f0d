"""Domain exceptions -> HTTP answers that tell a client what to fix (never a 500).

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

from day2.campaign_flow import IllegalCampaignTransition
from fleet.parsers import too_large_detail
from inventory.lifecycle import IllegalTransition
from inventory.locking import NodeLocked
from inventory.services import ActionNotAllowed, CannotCancel, DeleteRefused
from provisioning.images import ImageImmutable
from rma.workflow import IllegalCaseTransition, ResolutionRequired

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
    if isinstance(exc, ActionNotAllowed | IllegalTransition):
        return Response(
            {"detail": str(exc), "state": exc.state, "allowed": exc.allowed},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, IllegalCampaignTransition):
        return Response(
            {"detail": str(exc), "status": exc.status, "allowed": exc.allowed},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, IllegalCaseTransition):
        return Response(
            {"detail": str(exc), "status": exc.status, "allowed": exc.allowed},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, ResolutionRequired):
        return Response({"resolution": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, NodeLocked):
        return Response(
            {
                "detail": str(exc),
                "locked_by": exc.holder,
                "locked_since": exc.since.isoformat() if exc.since else None,
            },
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, DeleteRefused):
        return Response(
            {"detail": str(exc), "instead": "decommission"}, status=status.HTTP_409_CONFLICT
        )
    if isinstance(exc, CannotCancel):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, ImageImmutable):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
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
