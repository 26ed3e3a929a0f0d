"""nvbandwidth output: one bandwidth matrix per test, optionally a ``SUM <test> <value>``.

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
_SUM = re.compile(r"^SUM (\S+) (\S+)$")
_UNIT = re.compile(r"\(([^()]*/s|ns|us|ms)\)\s*$")


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


@dataclasses.dataclass
class NvbandwidthResult(Result):
    tool = "nvbandwidth"

    version: str | None
    driver_version: str | None
    tests: dict[str, NvbandwidthTest]
    devices: list[str]


class _Block:
    def __init__(self, name: str, line: int) -> None:
        self.name = name
        self.line = line
        self.title = ""
        self.columns: list[str] = []
        self.rows: list[list[float | None]] = []
        self.sum: float | None = None
        self.waived = False


def _finish(block: _Block, any_sum: bool) -> NvbandwidthTest:
    if block.waived:
        return NvbandwidthTest(block.name, block.title, None, [], [], None, None, None, None, True)
    if not block.columns or not block.rows:
        raise ParseError(f"expected a bandwidth matrix for test {block.name!r}", line=block.line)
    gpu_square = "GPU(row)" in block.title and "GPU(column)" in block.title
    if gpu_square and len(block.rows) != len(block.columns):
        raise ParseError(
            f"incomplete matrix for {block.name!r}: {len(block.rows)} rows for "
            f"{len(block.columns)} columns (output cut short?)",
            line=block.line,
        )
    if any_sum and block.sum is None:
        raise ParseError(f"incomplete output: no 'SUM {block.name}' line", line=block.line)
    cells = [
        v
        for r, row in enumerate(block.rows)
        for c, v in enumerate(row)
        if v is not None and not (gpu_square and r == c)
    ]
    unit = _UNIT.search(block.title)
    return NvbandwidthTest(
        name=block.name,
        title=block.title,
        unit=unit.group(1) if unit else None,
        columns=block.columns,
        matrix=block.rows,
        min=min(cells) if cells else None,
        max=max(cells) if cells else None,
        mean=round(statistics.fmean(cells), 4) if cells else None,
        sum=block.sum,
    )


def parse_nvbandwidth(text: str) -> NvbandwidthResult:
    """Parse nvbandwidth stdout into per-test matrices and statistics."""
    check_text(text, "nvbandwidth output")
    blocks: list[_Block] = []
    block: _Block | None = None
    version = driver = None
    devices: list[str] = []
    sums: dict[str, float] = {}
    for number, raw in numbered_lines(text):
        line = raw.strip()
        if not line:
            continue
        if match := _RUNNING.match(line):
            block = _Block(match.group(1), number)
            blocks.append(block)
        elif match := _SUM.match(line):
            value = to_float(match.group(2), f"SUM {match.group(1)}", number)
            sums[match.group(1)] = value
            for candidate in blocks:
                if candidate.name == match.group(1):
                    candidate.sum = value
        elif line.startswith("nvbandwidth Version:"):
            version = line.split(":", 1)[1].strip()
        elif line.startswith("Driver Version:"):
            driver = line.split(":", 1)[1].strip()
        elif re.match(r"^Device \d+:", line):
            devices.append(line.split(":", 1)[1].strip())
        elif block is None:
            continue
        elif line.lower().startswith("waived"):
            block.waived = True
        elif not block.title:
            block.title = line
        elif not block.columns:
            block.columns = line.split()
            if not all(c.isdigit() for c in block.columns):
                raise ParseError(
                    f"expected column indices under the title of {block.name!r}, got {line!r}",
                    line=number,
                )
        else:
            cells = line.split()
            if len(cells) != len(block.columns) + 1 or not cells[0].isdigit():
                raise ParseError(
                    f"expected a matrix row '<index>' + {len(block.columns)} values for "
                    f"{block.name!r}, got {len(cells)} fields",
                    line=number,
                )
            block.rows.append(
                [None if c == "N/A" else to_float(c, block.name, number) for c in cells[1:]]
            )
    if not blocks:
        raise ParseError("expected at least one 'Running <test>.' block; none found")
    any_sum = bool(sums)
    tests = {}
    for item in blocks:
        tests[item.name] = _finish(item, any_sum)
    return NvbandwidthResult(version=version, driver_version=driver, tests=tests, devices=devices)
