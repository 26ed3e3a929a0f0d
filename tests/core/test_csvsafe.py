"""CSV cells a spreadsheet will not run as formulas (core.csvsafe): the OWASP rule on text,
numbers left as numbers, and no CSV writer in Corral that bypasses it (pure)."""

from __future__ import annotations

import ast
import csv
import io
from decimal import Decimal

import pytest

from core import csvsafe
from tests.test_architecture import ROOT, SOURCE_DIRS, python_files

FORMULAS = [
    '=HYPERLINK("http://x","y")',
    "@SUM(1)",
    "+cmd|' /C calc'!A0",
    "-2+3",
    "-cmd",
    "\t=1+1",
    "\r=1+1",
    "+44 20 7946 0000",
]


def written(row: list) -> list[str]:
    out = io.StringIO()
    csvsafe.writer(out).writerow(row)
    return next(csv.reader(io.StringIO(out.getvalue())))


@pytest.mark.parametrize("text", FORMULAS)
def test_text_that_could_start_a_formula_is_quoted(text):
    assert csvsafe.cell(text) == "'" + text
    assert written([text]) == ["'" + text]


def test_numbers_and_plain_text_are_written_as_they_are():
    numbers = [-3.5, -2, Decimal("-0.25"), 0, None]
    assert written(numbers) == ["-3.5", "-2", "-0.25", "0", ""]
    text = ["-3.5", "+1", "-1e-3", ".5", "r01", "a=b", "", "1.45", "H100 -SXM"]
    assert written(text) == text


def test_writerows_and_a_streamed_writer_quote_too():
    class Echo:
        def write(self, value: str) -> str:
            return value

    assert csvsafe.writer(Echo()).writerow(["@x", -1]) == "'@x,-1\r\n"
    out = io.StringIO()
    csvsafe.writer(out, lineterminator="\n").writerows([["=1"], ["ok"]])
    assert out.getvalue() == "'=1\nok\n"


def test_no_source_writes_csv_without_csvsafe():
    """A new export that calls csv.writer or csv.DictWriter itself would write formulas."""
    offenders = []
    for path in python_files(*SOURCE_DIRS):
        if path == ROOT / "core" / "csvsafe.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            direct = (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "csv"
                and node.attr in ("writer", "DictWriter")
            )
            imported = (
                isinstance(node, ast.ImportFrom)
                and node.module == "csv"
                and {a.name for a in node.names} & {"writer", "DictWriter"}
            )
            if direct or imported:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"write CSV through core.csvsafe.writer: {offenders}"
