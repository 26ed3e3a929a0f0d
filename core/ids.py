"""Message ids and webhook secrets."""

from __future__ import annotations

import base64
import secrets
import time

# Crockford's base32: sortable as text, no I/L/O/U to misread in a log.
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32  # Standard Webhooks asks for 24 to 64 random bytes.


def new_msg_id(now_ms: int | None = None) -> str:
    """`msg_` + a ULID: 48 bits of milliseconds then 80 random bits, so ids sort by time
    (a receiver's log reads in order) and two processes never collide in practice."""
    ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    value = (ms << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "msg_" + "".join(reversed(chars))


def new_secret() -> str:
    """`whsec_<base64 of 32 random bytes>`, the format standardwebhooks.Webhook accepts."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()
