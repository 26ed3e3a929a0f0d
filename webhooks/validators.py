"""The rules a subscription's fields follow, once, for the API, the admin and services."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from core import egress
from core.ids import SECRET_PREFIX

from .outbox import EVENT_TYPES


def check_url(url: str) -> str:
    """http or https with a host the egress policy lets webhooks reach (core.egress; a name
    is resolved). Private addresses are allowed unless CORRAL_WEBHOOK_ALLOW says otherwise:
    the usual receiver is a ticketing system inside the same network. Delivery checks
    again on every connection (DNS can change)."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port that is not a number in range
    except ValueError as exc:
        raise ValidationError({"url": f"Not a valid URL: {exc}."}) from exc
    if parts.scheme not in ("http", "https"):
        raise ValidationError({"url": "Use an http:// or https:// URL."})
    if not parts.hostname or any(c.isspace() for c in url):
        raise ValidationError({"url": "The URL needs a host (https://host/path)."})
    if port == 0:
        raise ValidationError({"url": "Port 0 is not a port."})
    try:
        egress.check_url(url, egress.WEBHOOK)
    except egress.Refused as exc:
        raise egress.validation_error("url", exc) from None
    return url


def check_secret(secret: str) -> str:
    """A signing secret as standardwebhooks takes it: `whsec_` and the base64 of at least
    24 bytes. The message never repeats the value."""
    body = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else None
    try:
        if body is not None and len(base64.b64decode(body, validate=True)) >= 24:
            return secret
    except (binascii.Error, ValueError):
        pass
    raise ValidationError(
        {
            "secret": f"Not a signing secret ({SECRET_PREFIX} and base64 of at least 24 "
            "bytes); the value is not repeated here."
        }
    )


def check_events(events: object) -> list[str]:
    """A non-empty list of known event types, each once, in the order given."""
    if not isinstance(events, list) or not events:
        raise ValidationError({"events": f"Give a list of event types: {', '.join(EVENT_TYPES)}."})
    unknown = [e for e in events if not isinstance(e, str) or e not in EVENT_TYPES]
    if unknown:
        raise ValidationError(
            {"events": f"Unknown event type {unknown[0]!r}; known: {', '.join(EVENT_TYPES)}."}
        )
    return list(dict.fromkeys(events))
