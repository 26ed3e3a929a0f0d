"""nvbandwidth output: one bandwidth matrix per test (bidirectional tests from v0.8 print
one per direction plus a total), optionally ``SUM <key> <value>`` and, from v0.10,
``COEFFICIENT_OF_VARIATION <key> <value>``.

Each test block is ``Running <test>.``, a title line (``memcpy CE GPU(row) <- GPU(column)
bandwidth (GB/s)``), a column-index header, one row per row-index, and in newer versions
``SUM <test> <value>``. Rows are the destination and columns the source for ``<-``
titles. On GPU-by-GPU matrices the diagonal is a GPU copying to itself, which
nvbandwidth does not measure (older versions print ``0.00``, newer ``N/A``); it is left
out of min/max/mean so a healthy 8-GPU box does not report a minimum of 0 GB/s.
"""

from __future__ import annotations

import dataclasses
import re
import statistics

from .base import ParseError, Result, check_text, numbered_lines, to_float

_RUNNING = re.compile(r"^Running (\S+?)\.?$")
# SUM and, from v0.10, COEFFICIENT_OF_VARIATION after each matrix; "&&&& PERF" replaces
# SUM with --perfFormatter (value glued to its unit); MIN/MAX/AVG are -v extras.
_KEYED = re.compile(r"^(SUM|COEFFICIENT_OF_VARIATION|&&&& PERF|MIN|MAX|AVG) (\S+) ([-+.\deE]+)")
_UNIT = re.compile(r"\(([^()]*/s|ns|us|ms)\)\s*$")
# Bidirectional tests print one matrix per direction and a total, titled e.g.
# "memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)"; the SUM line names it
# <test>_read1, so that is the matrix's key.
_PART = re.compile(r"\)\s+(\w+)\s+(?:bandwidth|latency)\b")
_TITLE = re.compile(r"bandwidth|latency|\(row\)", re.IGNORECASE)
# Lines every v0.6+ run prints after the last test.
_FOOTER = ("NOTE:", "Performance can vary")


@dataclasses.dataclass
class NvbandwidthTest:
    name: str
    title: str
    unit: str | None
    columns: list[str]
    matrix: list[list[float | None]]
    min: float | None
    max: float | None
    mean: float | None
    sum: float | None
    waived: bool = False
    cov: float | None = None


@dataclasses.dataclass
class NvbandwidthResult(Result):
    tool = "nvbandwidth"

    version: str | None
    driver_version: str | None
    tests: dict[str, NvbandwidthTest]
    devices: list[str]
    waived_unnamed: int = 0


class _Matrix:
    def __init__(self, key: str, title: str, line: int) -> None:
        self.key = key
        self.line = line
        self.title = title
        self.columns: list[str] = []
        self.rows: list[list[float | None]] = []
        self.sum: float | None = None
        self.cov: float | None = None
        self.waived = False


def _key(test: str, title: str) -> str:
    part = _PART.search(title)
    return f"{test}_{part.group(1).lower()}" if part else test


def _finish(block: _Matrix, any_sum: bool) -> NvbandwidthTest:
    if block.waived:
        return NvbandwidthTest(block.key, block.title, None, [], [], None, None, None, None, True)
    if not block.columns or not block.rows:
        raise ParseError(f"expected a bandwidth matrix for test {block.key!r}", line=block.line)
    gpu_square = "GPU(row)" in block.title and "GPU(column)" in block.title
    if gpu_square and len(block.rows) != len(block.columns):
        raise ParseError(
            f"incomplete matrix for {block.key!r}: {len(block.rows)} rows for "
            f"{len(block.columns)} columns (output cut short?)",
            line=block.line,
        )
    if any_sum and block.sum is None:
        raise ParseError(f"incomplete output: no 'SUM {block.key}' line", line=block.line)
    cells = [
        v
        for r, row in enumerate(block.rows)
        for c, v in enumerate(row)
        if v is not None and not (gpu_square and r == c)
    ]
    unit = _UNIT.search(block.title)
    return NvbandwidthTest(
        name=block.key,
        title=block.title,
        unit=unit.group(1) if unit else None,
        columns=block.columns,
        matrix=block.rows,
        min=min(cells) if cells else None,
        max=max(cells) if cells else None,
        mean=round(statistics.fmean(cells), 4) if cells else None,
        sum=block.sum,
        cov=block.cov,
    )


class _Reader:
    """Walks the output once; ``matrices`` in order, ``test`` the running test's name."""

    def __init__(self) -> None:
        self.matrices: list[_Matrix] = []
        self.test: str | None = None
        self.current: _Matrix | None = None
        self.version: str | None = None
        self.driver: str | None = None
        self.devices: list[str] = []
        self.waived_unnamed = 0
        self.any_sum = False

    def keyed(self, kind: str, key: str, token: str, number: int) -> None:
        if kind in ("MIN", "MAX", "AVG"):
            return
        value = to_float(token, f"{kind} {key}", number)
        target = next((m for m in reversed(self.matrices) if m.key == key), None)
        if kind == "COEFFICIENT_OF_VARIATION":
            if target is not None:
                target.cov = value
            return
        self.any_sum = True
        if target is not None:
            target.sum = value

    def header(self, line: str) -> bool:
        if line.startswith("nvbandwidth Version:"):
            self.version = line.split(":", 1)[1].strip()
        elif line.startswith("Driver Version:"):
            self.driver = line.split(":", 1)[1].strip()
        elif re.match(r"^Device \d+:", line):
            self.devices.append(line.split(":", 1)[1].strip())
        else:
            return False
        return True

    def body(self, line: str, number: int) -> None:
        if line.lower().startswith("waived"):
            # v0.5+ print "Waived: " in place of "Running <test>." for a test that does
            # not apply, without its name; it must not waive the test printed before it.
            # A test announced as running and then waived is recorded as waived.
            if self.test is not None and self.current is None:
                self.matrices.append(_Matrix(self.test, "", number))
                self.matrices[-1].waived = True
            else:
                self.waived_unnamed += 1
            self.test = self.current = None
            return
        if self.test is None:
            return
        current = self.current
        if current is not None and current.rows and not line.split()[0].isdigit():
            if not _TITLE.search(line):
                raise ParseError(
                    f"expected a matrix row or the next matrix's title for {current.key!r}, "
                    f"got {line!r}",
                    line=number,
                )
            current = None
        if current is None:
            self.current = _Matrix(_key(self.test, line), line, number)
            self.matrices.append(self.current)
        elif not current.columns:
            current.columns = line.split()
            if not all(c.isdigit() for c in current.columns):
                raise ParseError(
                    f"expected column indices under the title of {current.key!r}, got {line!r}",
                    line=number,
                )
        else:
            cells = line.split()
            if len(cells) != len(current.columns) + 1 or not cells[0].isdigit():
                raise ParseError(
                    f"expected a matrix row '<index>' + {len(current.columns)} values for "
                    f"{current.key!r}, got {len(cells)} fields",
                    line=number,
                )
            current.rows.append(
                [None if c == "N/A" else to_float(c, current.key, number) for c in cells[1:]]
            )


def parse_nvbandwidth(text: str) -> NvbandwidthResult:
    """Parse nvbandwidth stdout into per-matrix results and statistics."""
    check_text(text, "nvbandwidth output")
    if text.lstrip().startswith("{"):
        raise ParseError(
            "nvbandwidth -j JSON is not read (v0.8 appends the matrices of a bidirectional "
            "test into one bandwidth_matrix); run nvbandwidth without -j",
            line=1,
        )
    reader = _Reader()
    for number, raw in numbered_lines(text):
        line = raw.strip()
        if not line:
            continue
        if match := _RUNNING.match(line):
            reader.test, reader.current = match.group(1), None
        elif match := _KEYED.match(line):
            reader.keyed(match.group(1), match.group(2), match.group(3), number)
        elif line.startswith(_FOOTER):
            reader.test = reader.current = None
        elif not reader.header(line):
            reader.body(line, number)
    if not reader.matrices:
        raise ParseError("expected at least one 'Running <test>.' block; none found")
    tests = {m.key: _finish(m, reader.any_sum) for m in reader.matrices}
    return NvbandwidthResult(
        version=reader.version,
        driver_version=reader.driver,
        tests=tests,
        devices=reader.devices,
        waived_unnamed=reader.waived_unnamed,
    )
