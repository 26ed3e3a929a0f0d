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
