"""Firmware versions compared the way vendors write them, not as plain strings.

"2.9" < "2.10", and what a BMC's FirmwareInventory says is rarely just dotted numbers.
The forms below are taken from real inventories (tests/corpus/redfish); the first rule
whose pattern matches a version reads it, and the generic one reads the rest:

- NVIDIA GPU VBIOS, `96.00.A6.00.01`: five or more two-character groups, each a hex
  byte, so A6 comes after 89.
- HPE ProLiant system ROM, `A43 v2.52 (10/29/2021)`: a ROM family and its version; two
  families are different ROMs (a baseline naming another family is not "older").
- A version followed by its build date, `2.72 Sep 04 2022` (HPE iLO) or
  `1.39 (585433 bytes)`; and `BIOS Date: 08/04/2023 Ver 1.4` (AMI): the version only.
- Everything else (RPM's rule, the one package managers agree on): split into runs of
  digits and runs of letters, ignore separators, compare digits as numbers and letters
  case-blind; a number is newer than letters in the same place; the longer is newer,
  unless what it adds starts with a pre-release word (`rc`, `beta`, `dev`, ...), which
  makes it older: `HGX-22.10-1-rc34` < `HGX-22.10-1-rc57`, `1.0.0-rc1` < `1.0.0`.

`compare` answers -1, 0 or 1, or None where the two cannot be ordered (two families).
Equal means equal as read: `1.45` and `01.45` are the same version; `1.45` and `1.45.0`
are not, as no vendor promises that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEX_GROUPS = re.compile(r"^[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f]{2}){4,}$")
_HPE_ROM = re.compile(r"^([A-Z]\d{2}) v(\d+(?:\.\d+)*)(?:\s*\(.*\))?$")
_AMI_DATE = re.compile(r"^BIOS Date:\s*\S+\s+Ver\s+(\S+)$", re.IGNORECASE)
_BUILD_DATE = re.compile(
    r"^(\S+)\s+(?:[A-Z][a-z]{2} \d{1,2} \d{4}|\(\d{1,2}/\d{1,2}/\d{4}\)|\(\d+ bytes\))$"
)
_TOKENS = re.compile(r"\d+|[A-Za-z]+")
PRE_RELEASE = frozenset({"rc", "alpha", "beta", "dev", "pre"})


@dataclass(frozen=True)
class Version:
    text: str
    parts: tuple[int | str, ...]
    family: str = ""


def parse(text: str) -> Version:
    raw = text.strip()
    if _HEX_GROUPS.match(raw):
        return Version(raw, tuple(int(group, 16) for group in raw.split(".")))
    if match := _HPE_ROM.match(raw):
        return Version(raw, _tokens(match.group(2)), family=match.group(1))
    if match := _AMI_DATE.match(raw):
        return Version(raw, _tokens(match.group(1)))
    if match := _BUILD_DATE.match(raw):
        return Version(raw, _tokens(match.group(1)))
    return Version(raw, _tokens(raw))


def _tokens(text: str) -> tuple[int | str, ...]:
    return tuple(int(t) if t.isdigit() else t.lower() for t in _TOKENS.findall(text))


def compare(a: str, b: str) -> int | None:
    """-1 if a is older than b, 0 if the same, 1 if newer; None if they cannot be ordered."""
    left, right = parse(a), parse(b)
    if left.family != right.family:
        return None
    for x, y in zip(left.parts, right.parts, strict=False):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return -1 if x < y else 1
        if isinstance(x, str) and isinstance(y, str):
            return -1 if x < y else 1
        return 1 if isinstance(x, int) else -1  # a number is newer than letters
    if len(left.parts) == len(right.parts):
        return 0
    longer, sign = (left, 1) if len(left.parts) > len(right.parts) else (right, -1)
    extra = longer.parts[min(len(left.parts), len(right.parts))]
    return -sign if extra in PRE_RELEASE else sign


def same(a: str, b: str) -> bool:
    return compare(a, b) == 0


def older(a: str, b: str) -> bool:
    """a is older than b (False where they cannot be ordered)."""
    return compare(a, b) == -1
