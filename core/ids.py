"""Message ids and webhook secrets."""

from __future__ import annotations

import base64
import secrets
import threading
import time

# Crockford's base32: sortable as text, no I/L/O/U to misread in a log.
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32  # Standard Webhooks asks for 24 to 64 random bytes.


_last = [0, 0]  # (milliseconds, random part) of this process's latest id
_lock = threading.Lock()


def new_msg_id(now_ms: int | None = None) -> str:
    """`msg_` + a ULID: 48 bits of milliseconds then 80 random bits, so ids sort by time
    (a receiver's log reads in order) and two processes never collide in practice.

    Monotonic within a process (the ULID spec's rule): an id made in the same millisecond
    as the previous one takes its random part + 1, so it still sorts after it.
    """
    ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    with _lock:
        if now_ms is None and ms <= _last[0] and _last[1] + 1 < 1 << 80:
            ms, rand = _last[0], _last[1] + 1
        else:
            rand = secrets.randbits(80)
        if now_ms is None:
            _last[0], _last[1] = ms, rand
    value = (ms << 80) | rand
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "msg_" + "".join(reversed(chars))


def new_secret() -> str:
    """`whsec_<base64 of 32 random bytes>`, the format standardwebhooks.Webhook accepts."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()
