"""Input validation shared by models, forms, the API and the CSV importer."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

_MAC_HEX = re.compile(r"^[0-9a-f]{12}\Z")
_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"^(?=.{{1,253}}\Z){_LABEL}(\.{_LABEL})*\Z")


def normalise_mac(value: str) -> str:
    """Accept aa:bb.., AA-BB-.., aabb.ccdd.eeff or aabbccddeeff; return aa:bb:cc:dd:ee:ff."""
    hexdigits = re.sub(r"[:\-.\s]", "", str(value).strip().lower())
    if not _MAC_HEX.match(hexdigits):
        raise ValueError(value)
    return ":".join(hexdigits[i : i + 2] for i in range(0, 12, 2))


def validate_mac(value: str) -> None:
    try:
        normalise_mac(value)
    except ValueError:
        raise ValidationError(
            "'%(value)s' is not a MAC address; use six hex pairs such as 52:54:00:ab:cd:ef.",
            code="invalid_mac",
            params={"value": value},
        )


def validate_bmc_address(value: str) -> None:
    """A bare host/IP, host:port, or an http(s) URL without path tricks."""
    message = (
        "'%(value)s' is not a BMC address; give a host name, an IP, or a URL such as "
        "https://10.0.0.21"
    )
    raw = str(value).strip()
    if "://" in raw:
        parts = urlsplit(raw)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError(message, code="invalid_bmc_address", params={"value": value})
        host = parts.hostname
        try:
            parts.port  # noqa: B018  (raises ValueError on a bad port)
        except ValueError:
            raise ValidationError(message, code="invalid_bmc_address", params={"value": value})
    else:
        host = raw
        if raw.count(":") == 1:
            host, _, port = raw.partition(":")
            if not port.isdigit() or not 0 < int(port) < 65536:
                raise ValidationError(message, code="invalid_bmc_address", params={"value": value})
        host = host.strip("[]")
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    if not _HOST.match(host.lower()):
        raise ValidationError(message, code="invalid_bmc_address", params={"value": value})
