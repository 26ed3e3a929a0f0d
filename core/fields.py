"""An encrypted text field for secrets at rest: BMC passwords, deploy tokens, webhook secrets.

Fernet (AES-128-CBC + HMAC) from `cryptography`; keys come from FIELD_ENCRYPTION_KEYS.
The first key encrypts and every key decrypts, so keys can be rotated without a flag day.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...], fallback_secret: str) -> MultiFernet:
    if keys:
        try:
            return MultiFernet([Fernet(k.encode()) for k in keys])
        except ValueError as exc:
            raise ImproperlyConfigured(
                "FIELD_ENCRYPTION_KEYS must be url-safe base64 Fernet keys "
                "(generate one with `python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'`)"
            ) from exc
    # Development fallback only: `manage.py check --deploy` reports its use as an error.
    derived = base64.urlsafe_b64encode(hashlib.sha256(fallback_secret.encode()).digest())
    return MultiFernet([Fernet(derived)])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.FIELD_ENCRYPTION_KEYS), settings.SECRET_KEY)


class EncryptedTextField(models.TextField):
    """Stores ciphertext; Python code only ever sees plaintext."""

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return fernet().encrypt(str(value).encode()).decode()

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value in (None, ""):
            return value
        try:
            return fernet().decrypt(value.encode()).decode()
        except InvalidToken as exc:
            raise ImproperlyConfigured(
                "A stored secret (BMC password, webhook secret) cannot be decrypted with "
                "FIELD_ENCRYPTION_KEYS: the key was changed or lost. Restore the old key "
                "(it may stay as a second key for rotation)."
            ) from exc
