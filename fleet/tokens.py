"""The API endpoint that rotates the caller's own token (fleet.authn says how tokens work)."""

from __future__ import annotations

from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from drf_spectacular.utils import extend_schema, inline_serializer
from knox.models import AuthToken
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from core import strict as serializers
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
    token that asked stops working. The caller's other tokens (other scripts) are kept."""

    # Any role may replace its own token (docs/roles.md): it grants nothing new.
    write_capability = VIEW

    @extend_schema(request=None, responses={201: ROTATED})
    def post(self, request):
        if not isinstance(request.auth, AuthToken):
            return Response(
                {
                    "detail": "Rotation replaces the token that authenticates the request; "
                    "send Authorization: Token <key>."
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        instance, key = AuthToken.objects.create(user=request.user)
        request.auth.delete()
        return Response({"token": key, "expiry": instance.expiry}, status=status.HTTP_201_CREATED)
