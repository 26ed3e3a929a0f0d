"""What a JSON document must be before anything stores it: shallow, and free of NULs.

PostgreSQL cannot store U+0000 in text or jsonb, so a NUL that reached a query was a 500
("unsupported Unicode escape sequence"); a document nested past Python's stack was one too
(RecursionError while decoding). The API's parser (fleet.parsers) and the boot callback
both check here, so every JSON body is refused the same way: a 400 naming the field.
"""

from __future__ import annotations

import json
from typing import Any

# Far deeper than any Corral document (facts are two levels, params one); shallow enough
# that walking it never nears the interpreter's recursion limit.
MAX_DEPTH = 32
NUL_MESSAGE = "Contains a NUL character (\\u0000), which cannot be stored."


class JSONRefused(ValueError):
    """`detail`: a message for the whole document; `field`: the path of the bad value."""

    def __init__(self, detail: str, field: str | None = None):
        super().__init__(detail)
        self.detail = detail
        self.field = field

    def as_body(self) -> dict:
        return {self.field: [self.detail]} if self.field else {"detail": self.detail}


def too_deep() -> JSONRefused:
    return JSONRefused(f"JSON nested deeper than {MAX_DEPTH} levels; flatten it.")


def _join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def check(data: object) -> object:
    """`data` if it is at most MAX_DEPTH deep and holds no NUL in a key or string; else
    JSONRefused naming the first offending path (`facts.os.kernel`, `labels[3]`)."""
    stack: list[tuple[object, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if "\0" in value:
                raise JSONRefused(NUL_MESSAGE, path or "detail")
            continue
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_DEPTH:
            raise too_deep()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and "\0" in key:
                raise JSONRefused(NUL_MESSAGE, _join(path, key.replace("\0", "\\u0000")))
            stack.append((item, _join(path, key), depth + 1))
    return data


def loads(text: str | bytes, **kwargs: Any) -> object:
    """json.loads, then check(); a document too deep for the decoder is JSONRefused, any
    other undecodable text the ValueError json.loads raises."""
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise too_deep() from None
    return check(data)
