"""Detached ed25519 signatures over a canonical manifest: how a site says "we released
this" of what Corral hands to machines (golden images, firmware packages), beyond the
sha256 that only says the bytes did not change on the way.

The manifest is the thing's identity and content hashes as canonical JSON (sorted keys,
no spaces), so a signature made with any tool (`openssl pkeyutl -sign -rawin`, PyNaCl,
`cryptography`) over the same bytes verifies. Keys are raw 32-byte public keys, base64;
a key that is not one is refused at start-up (`key_problems`), not at the first check.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


class Refused(Exception):  # noqa: N818 (an outcome, said to whoever submitted the thing)
    """Why a signature (or its absence) is not accepted, in words that say what to fix."""


def canonical(doc: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def _public_key(key: str) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(key, validate=True))


def key_problems(setting: str, keys: Iterable[str]) -> list[str]:
    """What is wrong with the keys of `setting` ([] when each is a raw ed25519 key)."""
    found = []
    for index, key in enumerate(keys, 1):
        try:
            _public_key(key)
        except (ValueError, binascii.Error):
            found.append(
                f"{setting}: key {index} is not a raw 32-byte ed25519 public key in base64"
            )
    return found


def check(
    signature: str,
    data: bytes,
    keys: list[str],
    required: bool,
    *,
    keys_setting: str,
    required_setting: str,
) -> None:
    """Accept `signature` over `data` if any of `keys` verifies it; an empty signature
    passes unless `required`. Refused says why, naming the setting involved."""
    if not signature:
        if required:
            raise Refused(f"unsigned, and {required_setting} is on")
        return
    if not keys:
        raise Refused(f"present but no {keys_setting} configured")
    try:
        raw = base64.b64decode(signature, validate=True)
    except (ValueError, binascii.Error):
        raise Refused("not valid base64") from None
    for key in keys:
        try:
            _public_key(key).verify(raw, data)
            return
        except (InvalidSignature, ValueError, binascii.Error):
            continue
    raise Refused(f"does not verify against any configured signing key ({keys_setting})")
