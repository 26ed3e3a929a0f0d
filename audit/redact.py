"""How a secret appears in the trail: that it is set, never any of its value.

auditlog's own mask keeps the second half of the value; for a BMC password or a webhook
secret that is half a secret. This keeps none, not even the ciphertext (the diff compares
the decrypted values, so a change is still seen).
"""

from __future__ import annotations

from core.urlsafe import redact_url

REDACTED = "***"


def redact(value: str) -> str:
    """ "***" for a value, "" for none (auditlog passes a missing value as "None")."""
    return "" if value in ("", "None") else REDACTED


def redact_secret_or_url(value: str) -> str:
    """A webhook subscription's masked fields: its secret as "***", its URL as
    core.urlsafe shows it (where it goes, without what may be a credential in it)."""
    if value.startswith(("http://", "https://")):
        return redact_url(value)
    return redact(value)
