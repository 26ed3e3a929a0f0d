"""Input validation shared by models, forms, the API and the CSV importer."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

from .macs import normalise_mac

_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"^(?=.{{1,253}}\Z){_LABEL}(\.{_LABEL})*\Z")


def validate_mac(value: str) -> None:
    try:
        normalise_mac(value)
    except ValueError:
        raise ValidationError(
            "'%(value)s' is not a MAC address; use six hex pairs such as 52:54:00:ab:cd:ef.",
            code="invalid_mac",
            params={"value": value},
        )


# Labels a node may carry: a few dozen are plenty to select by; the API held a request past
# 60 s adding 200,000. The API and the CSV import both refuse more.
MAX_LABELS = 64
TOO_MANY_LABELS = f"At most {MAX_LABELS} labels per node."


# The rule as a JSON Schema pattern too (the API's schema declares it for rack names).
RACK_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
_RACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
_RACK_CHARS = re.compile(r"[A-Za-z0-9._-]")


def validate_rack_name(value: str) -> None:
    """ASCII letters, digits, '.', '_' and '-', from a letter or digit: what is typed and
    read off a rack's label. A Cyrillic 'а' made a second 'ra1' nobody could tell from the
    first (issue 36); a space made 'r01 U12' (the node list's location search) ambiguous."""
    if _RACK_NAME.match(value):
        return
    odd = next((c for c in value if not _RACK_CHARS.match(c)), None)
    if odd is None:
        why = "it must start with a letter or digit"
    else:
        shown = f"'{odd}'" if odd.isprintable() and odd.isascii() else f"U+{ord(odd):04X}"
        why = f"{shown} is not one of them"
    raise ValidationError(
        "A rack name is ASCII letters, digits, '.', '_' and '-', starting with a letter or "
        f"digit: {why}.",
        code="invalid_rack_name",
    )
