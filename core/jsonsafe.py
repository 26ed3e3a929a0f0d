"""What a JSON document must be before anything stores it: shallow, free of NULs and of
lone surrogates.

PostgreSQL cannot store U+0000 in text or jsonb, so a NUL that reached a query was a 500
("unsupported Unicode escape sequence"); a document nested past Python's stack was one too
(RecursionError while decoding). JSON may spell half a UTF-16 surrogate pair ("\\ud800"),
which Python decodes to a code point UTF-8 cannot encode: the write to the database was a
500 (UnicodeEncodeError); DRF's CharField refuses those, its DictField and JSONField do
not (facts). The API's parser (fleet.parsers), the boot callback and the pages' JSON
text fields (drift's baseline form) all check here, so every JSON document is refused
the same way: a 400 naming the field.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Far deeper than any Corral document (facts are two levels, params one); shallow enough
# that walking it never nears the interpreter's recursion limit.
MAX_DEPTH = 32
NUL_MESSAGE = "Contains a NUL character (\\u0000), which cannot be stored."
SURROGATE_MESSAGE = (
    "Contains a lone surrogate (\\ud800-\\udfff, half of a UTF-16 pair), which is no "
    "character and cannot be stored; send the character itself or its whole pair."
)
# A code point in U+D800-U+DFFF: json.loads joins a proper pair into one character, so
# any that is left stands alone.
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def _refusal(text: str) -> str | None:
    """Why `text` cannot be stored, or None."""
    if "\0" in text:
        return NUL_MESSAGE
    if _SURROGATE.search(text):
        return SURROGATE_MESSAGE
    return None


def _printable(key: str) -> str:
    """`key` as a field name a JSON answer can carry: NULs and surrogates escaped."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", key.replace("\0", "\\u0000"))


def _join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def check(data: object) -> object:
    """`data` if it is at most MAX_DEPTH deep and holds no NUL or lone surrogate in a key
    or string; else JSONRefused naming the first offending path (`facts.os.kernel`,
    `labels[3]`)."""
    stack: list[tuple[object, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            why = _refusal(value)
            if why:
                raise JSONRefused(why, path or "detail")
            continue
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_DEPTH:
            raise too_deep()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and (why := _refusal(key)):
                raise JSONRefused(why, _join(path, _printable(key)))
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


def clean(data: Any) -> Any:
    """`data` with every NUL and lone surrogate, in keys and strings, replaced by U+FFFD:
    for what a machine reported (a BMC's strings, a tool's output), where refusing the
    whole report would lose every good value in it for one bad byte. A person's input is
    refused instead (check), so they can fix it."""
    if isinstance(data, str):
        return _SURROGATE.sub("\ufffd", data.replace("\0", "\ufffd"))
    if isinstance(data, dict):
        return {clean(key): clean(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [clean(item) for item in data]
    return data
