"""The API's one request parser: JSON, bounded and storable (see core.jsonsafe).

Set as DRF's only default parser, so every JSON endpoint refuses a document nested past
MAX_DEPTH, a NUL in any key or string (naming the field) and a body larger than
DATA_UPLOAD_MAX_MEMORY_SIZE (a 413) before a view sees it; and drf-spectacular declares
request bodies as JSON only. The CSV import alone adds the multipart parser.
"""

from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from core import jsonsafe


class PayloadTooLarge(APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def too_large_detail(limit: int | None = None) -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE if limit is None else limit
    return f"The request body is larger than {limit} bytes; send less per request."


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        # A view that takes whole files (the fleet's plan and apply) says how much it takes.
        limit = parser_context.get("max_bytes", settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        # DRF reads the request's stream itself, where Django's own limit (checked when
        # request.body is read) does not apply.
        raw = stream.read(limit + 1) if limit is not None else stream.read()
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge(too_large_detail(limit))
        try:
            text = codecs.decode(raw, encoding)
            return jsonsafe.loads(text, parse_constant=self._reject_constant)
        except jsonsafe.JSONRefused as exc:
            raise ParseError(exc.as_body()) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None

    @staticmethod
    def _reject_constant(name: str):
        raise ValueError(f"{name} is not valid JSON")
