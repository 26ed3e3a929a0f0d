"""A webhook URL as people and logs may see it: where it goes, not what opens it.

Receivers often take their credential in the URL: userinfo (`https://user:pw@host/`), a
query (`?token=`), or a secret path (`/services/T0/B0/XYZ`, as chat tools issue them).
The full URL is a secret like a BMC password: stored, used to deliver, never shown back,
logged or written to an audit trail (issue 36). What stays: the scheme, the host and
port, and the first path segment, enough to tell one receiver from another.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

HIDDEN = "…"


def redact_url(url: str) -> str:
    """`https://hooks.example.net/services/…?token=…` for the URL given; a value that is
    not a URL is hidden whole."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return HIDDEN
    if not parts.scheme or not host:
        return HIDDEN
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    segments = [s for s in parts.path.split("/") if s]
    path = f"/{segments[0]}" if segments else "/"
    if len(segments) > 1:
        path += f"/{HIDDEN}"
    elif parts.path.endswith("/") and segments:
        path += "/"
    query = "&".join(f"{k}={HIDDEN}" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, host + port, path, query, ""))
