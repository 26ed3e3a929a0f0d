"""CSV that a spreadsheet opens as data, never as formulas: every CSV Corral writes
(the drift export, the dashboards' CSVs, the import template) goes through `writer`.

Excel, LibreOffice and Google Sheets read a cell beginning with `=`, `+`, `-` or `@` as a
formula, and some strip a leading tab or carriage return first. Much of what the exports
carry is typed by someone else or reported by a machine (rack names, GPU models, firmware
versions read from a BMC), so `=HYPERLINK("http://evil","click")` in a rack name became a
live link in a manager's spreadsheet, and a DDE payload could start a program (CSV
injection). The OWASP rule applies here: such a cell is written with a leading `'`, which
the spreadsheet shows as text and does not evaluate; a person reading the raw file sees the
quote.

Numbers are left alone, so the figures still add up: a value the code writes as a number
(int, float, Decimal: -3.5 from a sum) is not text and cannot be a formula, and a text cell
that is a plain decimal number (a firmware reading "-3.5", "+1") is left alone too, because
nothing but digits, one sign, one point and an exponent can follow its sign. Anything else
("-1+2", "-cmd", "@SUM(1)", "+44 20 ...") is quoted.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

# What a spreadsheet may read as the start of a formula (OWASP's list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: Any) -> Any:
    """`value` as it may be written: numbers and None as they are, text that could start a
    formula behind a `'`."""
    if value is None or isinstance(value, int | float | Decimal):
        return value
    text = str(value)  # what csv would write: dates, enums
    if text.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


class SafeWriter:
    """csv.writer's writerow/writerows, every cell through `cell`; each returns what the
    underlying writer returned (a streamed export yields it)."""

    def __init__(self, out: Any, **options: Any):
        self._writer = csv.writer(out, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: Any, **options: Any) -> SafeWriter:
    """csv.writer(out, **options) that neutralises formula cells."""
    return SafeWriter(out, **options)
