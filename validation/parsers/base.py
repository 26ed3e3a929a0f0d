"""Shared pieces for the tool-output parsers: the error type, the result base class, and
the small helpers every parser needs to fail loudly instead of half-succeeding.

Nothing here (or anywhere in this package) may import Django: the parsers run inside
one-shot scripts on freshly imaged hosts where only the standard library is present.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from typing import Any, ClassVar

STATUSES = ("Pass", "Fail", "Warn", "Skip")


class ParseError(ValueError):
    """The text is not a complete, well-formed output of the tool.

    Raised for truncated, garbled or foreign input. The message always says what was
    expected and where (line number or JSON key), because the person reading it is
    usually looking at a failed acceptance run and needs to find the bad spot fast.
    """

    def __init__(self, message: str, *, line: int | None = None, key: str | None = None):
        self.line = line
        self.key = key
        where = []
        if line is not None:
            where.append(f"line {line}")
        if key is not None:
            where.append(f"key {key!r}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


def _jsonable(value: Any) -> Any:
    """Turn dataclasses, tuples, non-str keys and non-finite floats into plain JSON values
    so that ``to_dict()`` survives a ``json.dumps``/``json.loads`` round trip unchanged."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclasses.dataclass
class Result:
    """Base class of every parser result; ``tool`` names the registry key it came from."""

    tool: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-serialisable view of the result (what scripts and the CLI read)."""
        data = _jsonable(self)
        return {"tool": self.tool, **data}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)


def check_text(text: object, what: str) -> str:
    """Reject input that cannot possibly be the tool's output before any parsing starts.

    NUL bytes mean a binary or corrupted capture; an empty capture means the tool never
    ran or its output was lost, and treating either as "no findings" would be a silent pass.
    """
    if not isinstance(text, str):
        raise ParseError(f"expected {what} as text, got {type(text).__name__}")
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ParseError(f"expected {what} as text, found a NUL byte (binary data)", line=line)
    if not text.strip():
        raise ParseError(f"expected {what}, got empty input")
    return text


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with 1-based numbers and line endings (incl. CRLF from Windows copies) removed."""
    for number, line in enumerate(text.splitlines(), start=1):
        yield number, line.rstrip("\r")


def to_float(token: str, what: str, line: int | None = None, key: str | None = None) -> float:
    try:
        value = float(token)
    except (TypeError, ValueError):
        raise ParseError(f"expected a number for {what}, got {token!r}", line=line, key=key)
    return value


def to_int(token: str, what: str, line: int | None = None, key: str | None = None) -> int:
    try:
        return int(token)
    except (TypeError, ValueError):
        raise ParseError(f"expected an integer for {what}, got {token!r}", line=line, key=key)


def load_json_object(text: str, what: str) -> dict[str, Any]:
    """Decode one JSON object that starts at the first line beginning with ``{``.

    Tools such as fio print warnings before their JSON; anything after the object is
    ignored for the same reason. A missing or unterminated object is a ParseError with the
    position json reports, since a cut-off JSON document is the usual sign of a killed run.
    """
    start = None
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("{"):
            start = offset + (len(line) - len(line.lstrip()))
            break
        offset += len(line)
    if start is None:
        raise ParseError(f"expected a JSON object for {what}, found no line starting with '{{'")
    try:
        value, _end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"expected a complete JSON object for {what}: {exc.msg} at column {exc.colno}",
            line=exc.lineno,
        )
    except RecursionError:
        raise ParseError(f"expected a JSON object for {what}, nesting is too deep")
    if not isinstance(value, dict):
        raise ParseError(f"expected a JSON object for {what}, got {type(value).__name__}")
    return value


def get_path(data: Any, path: str, expected: type | tuple[type, ...], what: str) -> Any:
    """Walk ``a.b.c`` through nested dicts, raising ParseError naming the missing key."""
    node = data
    walked = []
    for part in path.split("."):
        walked.append(part)
        if not isinstance(node, dict) or part not in node:
            raise ParseError(f"expected {what}: missing", key=".".join(walked))
        node = node[part]
    if not isinstance(node, expected):
        names = (
            "/".join(t.__name__ for t in expected)
            if isinstance(expected, tuple)
            else expected.__name__
        )
        raise ParseError(
            f"expected {what} to be {names}, got {type(node).__name__}", key=".".join(walked)
        )
    return node


def worst_status(statuses: list[str]) -> str:
    """Fold per-device statuses into one: any Fail wins, then Warn, then Skip.

    Skip ranks above Pass on purpose: a test that did not run on every device has not
    passed, and an aggregate must never read better than its worst member.
    """
    for status in ("Fail", "Warn", "Skip"):
        if status in statuses:
            return status
    return "Pass"
