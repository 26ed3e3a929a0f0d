"""``dcgmi diag`` text output (the boxed table), DCGM 3.x and 4.x layouts.

DCGM 3.x prints one row per check with the GPUs folded into the status cell
(``Fail - GPU: 0``, ``Pass - GPUs: 1, 2, 3``, ``Skip - All``); DCGM 4.x prints one row
per test followed by ``GPUn: <status>`` rows. Warning and Info text is hard-wrapped at
the column width, mid-word, onto continuation rows whose left cell is empty; it is
joined back before anyone matches on it (see ``_join_chunk``).

The table's closing border is the completeness marker: output without it was cut off
and is rejected rather than read as "the tests seen so far passed".
"""

from __future__ import annotations

import re

from .base import ParseError, check_text, numbered_lines, worst_status
from .dcgm_result import (
    DcgmDiagResult,
    DcgmTest,
    build_result,
    canonical_test_name,
    normalise_status,
)

_BORDER = re.compile(r"^\+([-=]+)\+([-=]+)\+$")
_SECTION = re.compile(r"^[|+]-{2,}\s+(\S.*?)\s+-+\+-+[|+]$")
_GPU_STATUS = re.compile(r"^GPU\s?(\d+)\s*:\s*(Pass|Fail|Warn|Skip)$", re.IGNORECASE)
_V3_STATUS = re.compile(r"^(Pass|Fail|Warn|Skip)(?:\s+-\s+(All|GPUs?:\s*[\d,\s]+))?$")
_MESSAGE_LABEL = re.compile(r"^(Warning|Info|Error)\b\s*:?\s*(.*)$")
# Published captures sometimes replace rows with an editorial "[... elided ...]" line.
_ELISION = re.compile(r"^\[\s*\.\.\..*\]$")

_META_KEYS = {
    "dcgm version": "dcgm_version",
    "driver version detected": "driver_version",
    "gpu device ids detected": "gpu_device_ids",
}


class _Table:
    """Incremental state of the table walk, kept in one object so the row handler is
    a plain function instead of a closure over a dozen locals."""

    def __init__(self) -> None:
        self.meta: dict[str, str] = {}
        self.tests: list[DcgmTest] = []
        self.category: str | None = None
        self.current: DcgmTest | None = None
        self.message_kind: str | None = None
        self.message: str = ""
        self.message_full = False
        self.v3_statuses: list[tuple[str, str | None]] = []
        self.layout_v3 = False

    def close_message(self) -> None:
        if self.current is not None and self.message_kind is not None:
            target = self.current.info if self.message_kind == "Info" else self.current.warnings
            target.append(self.message.strip())
        self.message_kind = None
        self.message = ""

    def add_chunk(self, chunk: str, width: int) -> None:
        """Append one hard-wrapped chunk of a Warning/Info cell.

        DCGM cuts the text into ``width``-character chunks regardless of word boundaries,
        so after a chunk that filled the width the next one continues mid-word ("Resta" +
        "rt") and is glued on directly. A shorter chunk lost its trailing space to the
        cell padding, so one space goes back in.
        """
        text = chunk.rstrip()
        if not self.message:
            self.message = text.lstrip()
        elif self.message_full:
            self.message += text
        else:
            self.message += " " + text.lstrip()
        self.message_full = len(text) >= width


def _apply_v3_status(table: _Table, status: str, target: str, n_gpus: int) -> None:
    test = table.current
    assert test is not None
    table.layout_v3 = True
    if target == "All":
        for gpu in range(n_gpus):
            test.gpus[gpu] = status
    else:
        for token in re.findall(r"\d+", target):
            test.gpus[int(token)] = status
    table.v3_statuses.append((status, target))


def parse_dcgmi(text: str) -> DcgmDiagResult:
    """Parse ``dcgmi diag -r N`` text output into per-test, per-GPU statuses."""
    check_text(text, "dcgmi diag text output")
    table = _Table()
    state = "before"
    width = 0
    last_line = 0
    for number, raw in numbered_lines(text):
        last_line = number
        line = raw.rstrip()
        if state == "before":
            match = _BORDER.match(line)
            if match:
                width = len(match.group(2)) - 3
                state = "header"
            continue
        if state == "header":
            if _BORDER.match(line) and "=" in line:
                state = "body"
            elif not (line.startswith("|") and "Diagnostic" in line):
                raise ParseError(
                    "expected the '| Diagnostic | Result |' header row of the dcgmi table",
                    line=number,
                )
            continue
        if state == "done":
            continue
        # body
        if _BORDER.match(line):
            if "=" in line:
                raise ParseError("unexpected '+===' border inside the dcgmi table", line=number)
            state = "done"
            continue
        section = _SECTION.match(line)
        if section:
            _finish_test(table)
            table.category = section.group(1).strip()
            continue
        if _ELISION.match(line.strip()) or not line.strip():
            continue
        if not (line.startswith("|") and line.endswith("|") and line.count("|") >= 3):
            raise ParseError(
                "expected a dcgmi table row '| name | result |' or a '+---' border", line=number
            )
        left, _, right_raw = line[1:-1].partition("|")
        name = left.strip()
        chunk = right_raw[1:] if right_raw.startswith(" ") else right_raw
        value = right_raw.strip()
        _row(table, number, name, value, chunk, width)
    if state in ("before", "header"):
        raise ParseError(
            "expected a dcgmi diag results table (a '+----+----+' border and a "
            "'| Diagnostic | Result |' header); none found",
            line=last_line,
        )
    if state != "done":
        raise ParseError(
            "incomplete dcgmi output: the table's closing '+----+----+' border is missing "
            "(output cut short?)",
            line=last_line,
        )
    _finish_test(table)
    if not table.tests:
        raise ParseError("expected at least one test row in the dcgmi table", line=last_line)
    ids = [t.strip() for t in table.meta.get("gpu_device_ids", "").split(",") if t.strip()]
    return build_result(
        cls=DcgmDiagResult,
        tests=table.tests,
        dcgm_version=table.meta.get("dcgm_version"),
        driver_version=table.meta.get("driver_version"),
        gpu_device_ids=ids,
        source_format="text-3.x" if table.layout_v3 else "text-4.x",
    )


def _finish_test(table: _Table) -> None:
    table.close_message()
    test = table.current
    if test is not None and table.v3_statuses:
        test.status = worst_status([s for s, _ in table.v3_statuses])
    table.current = None
    table.v3_statuses = []


def _row(table: _Table, number: int, name: str, value: str, chunk: str, width: int) -> None:
    n_gpus = len([t for t in table.meta.get("gpu_device_ids", "").split(",") if t.strip()])
    if name and (table.category or "").lower() == "metadata":
        table.meta[_META_KEYS.get(name.lower(), name)] = value
        return
    label = _MESSAGE_LABEL.match(name) if name else None
    if label:
        if table.current is None:
            raise ParseError(f"'{name}' row appears before any test row", line=number)
        table.close_message()
        table.message_kind = label.group(1).capitalize()
        table.message_full = False
        table.add_chunk(chunk, width)
        return
    if name:
        _finish_test(table)
        match = _V3_STATUS.match(value)
        if not match:
            raise ParseError(
                f"expected a status (Pass/Fail/Warn/Skip) for test {name!r}, got {value!r}",
                line=number,
            )
        status = normalise_status(match.group(1), number)
        test = DcgmTest(
            name=canonical_test_name(name),
            display_name=name,
            category=table.category,
            status=status,
        )
        table.tests.append(test)
        table.current = test
        if match.group(2):
            _apply_v3_status(table, status, match.group(2), n_gpus)
        else:
            table.v3_statuses = [(status, None)]
        return
    # continuation row: empty left cell
    if table.current is None:
        raise ParseError("continuation row before any test row", line=number)
    gpu = _GPU_STATUS.match(value)
    if gpu:
        table.close_message()
        table.current.gpus[int(gpu.group(1))] = normalise_status(gpu.group(2), number)
        return
    v3 = _V3_STATUS.match(value)
    if v3 and v3.group(2):
        table.close_message()
        _apply_v3_status(table, normalise_status(v3.group(1), number), v3.group(2), n_gpus)
        return
    if table.message_kind is not None:
        table.add_chunk(chunk, width)
        return
    if not value:
        return
    raise ParseError(
        f"unexpected row under test {table.current.display_name!r}: expected 'GPUn: <status>' "
        f"or Warning/Info text, got {value!r}",
        line=number,
    )
