"""The one MAC normaliser. Pure Python (no Django), so the BMC drivers, which must import
without Django, use the same rules as enrolment, DHCP exports and the boot server."""

from __future__ import annotations

import re

# What a client that sent something else is told (boot endpoints).
NOT_A_MAC = "mac must be a MAC address such as 52:54:00:ab:cd:ef."

_MAC_HEX = re.compile(r"^[0-9a-f]{12}\Z")
# What normalise_mac accepts, as a JSON Schema pattern (the API schema declares it): twelve
# hex digits, separators anywhere.
MAC_PATTERN = r"^[:\-.\s]*([0-9A-Fa-f][:\-.\s]*){12}$"


def normalise_mac(value: str) -> str:
    """Accept aa:bb.., AA-BB-.., aabb.ccdd.eeff or aabbccddeeff; return aa:bb:cc:dd:ee:ff.

    Raises ValueError for anything else."""
    hexdigits = re.sub(r"[:\-.\s]", "", str(value).strip().lower())
    if not _MAC_HEX.match(hexdigits):
        raise ValueError(value)
    return ":".join(hexdigits[i : i + 2] for i in range(0, 12, 2))


def is_mac(value: str) -> bool:
    """Whether `value` is a MAC at all: the boot endpoints refuse (400) anything else
    before it is answered or recorded."""
    try:
        normalise_mac(value)
    except ValueError:
        return False
    return True


def mac_or_none(value: str | None) -> str | None:
    """normalise_mac for data we only read (a BMC's NIC list): no MAC rather than an error."""
    if not value:
        return None
    try:
        return normalise_mac(value)
    except ValueError:
        return None
