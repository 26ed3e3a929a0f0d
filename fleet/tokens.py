"""The API endpoint that rotates the caller's own token (fleet.authn says how tokens work)."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from knox.models import AuthToken
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from core import strict as serializers
from core.models import RotatedToken
from fleet.authn import ALREADY_ROTATED
from inventory.permissions import VIEW


class TokenScheme(KnoxTokenScheme):
    """The schema's security scheme for fleet.authn's knox subclass: `Authorization: Token
    <key>` (drf-spectacular matches the class exactly, not knox's parent)."""

    target_class = "fleet.authn.TokenAuthentication"
    name = "tokenAuth"


ROTATED = inline_serializer(
    "RotatedToken",
    {"token": serializers.CharField(), "expiry": serializers.DateTimeField(allow_null=True)},
)


class RotateToken(APIView):
    """POST with a token: a new token for the same user (its key shown this once), and the
    token that asked stops working. The caller's other tokens (other scripts) are kept.
    Of rotations sent at once with one token, one wins; the others get 409 (or 401 once
    the token is gone), neither counted as a failed login (core.models.RotatedToken)."""

    # Any role may replace its own token (docs/roles.md): it grants nothing new.
    write_capability = VIEW

    @extend_schema(
        request=None,
        responses={201: ROTATED, 409: OpenApiResponse(description=ALREADY_ROTATED)},
    )
    def post(self, request):
        if not isinstance(request.auth, AuthToken):
            return Response(
                {
                    "detail": "Rotation replaces the token that authenticates the request; "
                    "send Authorization: Token <key>."
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        with transaction.atomic():
            # Only one request can delete the presented token: a concurrent DELETE of the
            # same row waits for this one's commit and then finds nothing. So rotations
            # sent at once make one new token, and the others are told they lost.
            deleted, _ = AuthToken.objects.filter(digest=request.auth.digest).delete()
            if not deleted:
                return Response({"detail": ALREADY_ROTATED}, status=status.HTTP_409_CONFLICT)
            RotatedToken.remember(request.auth.digest)
            instance, key = AuthToken.objects.create(user=request.user)
        return Response({"token": key, "expiry": instance.expiry}, status=status.HTTP_201_CREATED)
