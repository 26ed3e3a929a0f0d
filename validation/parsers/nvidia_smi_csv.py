"""``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`` output.

With a header the field names (and units, ``memory.total [MiB]``) come from it; with
``noheader`` the caller must pass the same ``fields`` list it gave ``--query-gpu``,
because nothing in the output names the columns. Units are stripped from values either
way and ``[N/A]``/``[Not Supported]`` become None. A row with the wrong number of cells
is a ParseError, which is how a capture cut mid-line shows up.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from .base import ParseError, Result, check_text, numbered_lines

_HEADER_CELL = re.compile(r"^[a-z][a-z0-9_.]*(?: \[([^\]]+)\])?$")
_MISSING = {"[n/a]", "n/a", "[not supported]", "[unknown error]", "[insufficient permissions]"}
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?$")
# Identity fields stay strings even when they look numeric ("551.60" must not become 551.6).
_TEXT_FIELDS = ("driver_version", "vbios_version", "uuid", "serial", "name", "pci.", "inforom.")


@dataclasses.dataclass
class NvidiaSmiCsvResult(Result):
    tool = "nvidia-smi-csv"

    fields: list[str]
    units: dict[str, str]
    driver_version: str | None
    gpus: list[dict[str, Any]]


def _is_header(cells: list[str]) -> bool:
    return all(_HEADER_CELL.match(c) for c in cells) and any(
        "." in c or "_" in c or c in ("index", "name", "uuid", "serial") for c in cells
    )


def _value(name: str, cell: str, unit: str | None) -> Any:
    if cell.strip().lower() in _MISSING:
        return None
    text = cell.strip()
    if name.startswith(_TEXT_FIELDS):
        return text
    if unit and text.endswith(" " + unit):
        text = text[: -len(unit) - 1]
    elif unit is None and (match := re.match(r"^([-+]?\d+(?:\.\d+)?) ([A-Za-z%/]+)$", text)):
        text = match.group(1)
    if _NUMBER.match(text):
        return float(text) if "." in text else int(text)
    return text


def parse_nvidia_smi_csv(text: str, fields: list[str] | None = None) -> NvidiaSmiCsvResult:
    """Parse ``--query-gpu`` CSV; ``fields`` is required for ``noheader`` output."""
    check_text(text, "nvidia-smi --query-gpu CSV output")
    lines = [(n, line) for n, line in numbered_lines(text) if line.strip()]
    first_cells = [c.strip() for c in lines[0][1].split(",")]
    units: dict[str, str] = {}
    if _is_header(first_cells):
        names = []
        for cell in first_cells:
            name, _, unit = cell.partition(" [")
            names.append(name)
            if unit:
                units[name] = unit.rstrip("]")
        body = lines[1:]
        if not body:
            raise ParseError("expected at least one GPU row after the CSV header", line=1)
    elif fields:
        names = [f.strip() for f in fields]
        body = lines
    else:
        raise ParseError(
            "expected a CSV header naming the --query-gpu fields; for noheader output pass "
            "fields=[...]",
            line=lines[0][0],
        )
    gpus = []
    for number, line in body:
        cells = [c.strip() for c in line.split(", ")]
        if len(cells) != len(names):
            raise ParseError(
                f"expected {len(names)} comma-separated values ({', '.join(names)}), "
                f"got {len(cells)}",
                line=number,
            )
        pairs = zip(names, cells, strict=True)
        gpus.append({name: _value(name, cell, units.get(name)) for name, cell in pairs})
    drivers = {g.get("driver_version") for g in gpus if g.get("driver_version") is not None}
    if len(drivers) > 1:
        raise ParseError(f"expected one driver_version, got {sorted(map(str, drivers))}")
    return NvidiaSmiCsvResult(
        fields=names,
        units=units,
        driver_version=str(drivers.pop()) if drivers else None,
        gpus=gpus,
    )


_QUERY = re.compile(r"--query-gpu(?:=|\s+)(['\"]?)([^\s'\"]+)\1")


def query_fields(command: str) -> list[str] | None:
    """The ``--query-gpu`` field list of a command line, or None if it names none."""
    found = _QUERY.search(command)
    return [f.strip() for f in found.group(2).split(",") if f.strip()] if found else None
