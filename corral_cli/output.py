"""Output formats: `table` (for people; columns chosen per command), `json` and `yaml` (the
API's objects as they are, for scripts)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import yaml

FORMATS = ("table", "json", "yaml")

Column = tuple[str, Callable[[dict], Any]]


def dump(data: Any, fmt: str) -> str:
    """`data` as JSON or YAML text (no trailing newline)."""
    if fmt == "yaml":
        return yaml.safe_dump(
            data, sort_keys=False, default_flow_style=False, allow_unicode=True
        ).rstrip("\n")
    return json.dumps(data, indent=2, ensure_ascii=False)


def cell(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(cell(v) for v in value) or "-"
    return str(value).replace("\n", " ")


def table(rows: Sequence[dict], columns: Sequence[Column]) -> str:
    """Columns padded to their widest cell, a header in capitals, the last one unpadded."""
    grid = [[title.upper() for title, _ in columns]]
    grid += [[cell(get(row)) for _, get in columns] for row in rows]
    widths = [max(len(line[i]) for line in grid) for i in range(len(columns))]
    return "\n".join(
        "  ".join(text.ljust(widths[i]) for i, text in enumerate(line)).rstrip() for line in grid
    )


def pairs(items: Sequence[tuple[str, Any]]) -> str:
    """`key: value` lines, the keys aligned."""
    width = max((len(key) for key, _ in items), default=0)
    return "\n".join(f"{key + ':':<{width + 1}} {cell(value)}" for key, value in items)


def emit(out: TextIO, text: str) -> None:
    out.write(text + "\n")
    out.flush()
