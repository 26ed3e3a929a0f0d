"""nccl-tests text output (``all_reduce_perf`` and siblings); ``-J`` JSON is delegated.

Real captures come through mpirun/srun and NCCL_DEBUG=INFO, so the parser strips
``[1,0]<stdout>:``/``[0]``/``3:`` tag prefixes, skips ``NCCL INFO`` lines, and reads the
column layout from the header instead of assuming it: older nccl-tests print no
``root`` (and for some tests no ``redop``) column and an ``error`` column (the row's
largest relative error, judged against nccl-tests' own per-type tolerance, never a
count) instead of ``#wrong``; non-reducing tests print a blank redop cell; newer ones
can add per-iteration and timestamp columns. The footer
(``# Out of bounds values`` and ``# Avg bus bandwidth``) marks a complete run.
"""

from __future__ import annotations

import re

from .base import ParseError, check_text, numbered_lines, to_float, to_int
from .nccl_result import (
    ELEMENT_TYPES,
    NcclDevice,
    NcclResult,
    NcclRow,
    collective_from_program,
    summarise,
)

_PREFIX = re.compile(r"^(?:\[\d+(?:,\d+)*\](?:<std(?:out|err)>)?:?\s?|\d+:\s)")
_NCCL_LOG = re.compile(r"\bNCCL (INFO|WARN|TRACE|ABORT)\b")
_DEVICE = re.compile(
    r"^#\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
    r"\[([^\]]*)\]\s+(.+?)\s*$"
)
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\b")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_VERSION = re.compile(r"(?:nccl-library=(\d+)|NCCL version (\S+))")
_TIME_NAMES = ("time", "cputime")


def _columns(tokens: list[str], line: int) -> list[str]:
    """Name every column of the header: prefix columns as printed, then the first
    measurement group as ``oop_*`` and the second as ``ip_*``."""
    try:
        first_time = next(i for i, t in enumerate(tokens) if t in _TIME_NAMES)
    except StopIteration:
        raise ParseError("expected a 'time' column in the nccl-tests header", line=line)
    prefix = tokens[:first_time]
    if prefix[:3] != ["size", "count", "type"]:
        raise ParseError(
            f"expected header columns 'size count type ...', got {' '.join(prefix)!r}", line=line
        )
    cols = list(prefix)
    group_index = -1
    for token in tokens[first_time:]:
        if token == "timestamp":
            cols.append("timestamp")
            continue
        if token in _TIME_NAMES:
            group_index += 1
        if group_index > 1:
            raise ParseError("expected at most two measurement groups in the header", line=line)
        name = "time" if token in _TIME_NAMES else token.lstrip("#")
        cols.append(("oop_", "ip_")[group_index] + name)
    if "ip_busbw" not in cols or "oop_busbw" not in cols:
        raise ParseError("expected out-of-place and in-place busbw columns", line=line)
    return cols


def _num(token: str, what: str, line: int) -> float | None:
    return None if token.upper() == "N/A" else to_float(token, what, line)


def _wrong(token: str, what: str, line: int) -> int | None:
    value = _num(token, what, line)
    return None if value is None else int(value)


def _fill_blank_redop(tokens: list[str], cols: list[str]) -> list[str]:
    """nccl-tests prints the redop of a non-reducing test (alltoall) as blanks, so such
    a row is one cell short; put the blank back when the cells around it show that is
    all that happened (a known type before it, a number where the redop should be)."""
    if "redop" not in cols or len(tokens) != len(cols) - 1:
        return tokens
    at = cols.index("redop")
    if tokens[at - 1] not in ELEMENT_TYPES or not _is_number(tokens[at]):
        return tokens
    return [*tokens[:at], "", *tokens[at:]]


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _row(tokens: list[str], cols: list[str], line: int) -> NcclRow:
    tokens = _fill_blank_redop(tokens, cols)
    expected = len(cols) + (1 if "timestamp" in cols else 0)
    if len(tokens) != expected:
        raise ParseError(
            f"expected {expected} columns in an nccl-tests result row (as in the header), "
            f"got {len(tokens)}",
            line=line,
        )
    values = dict(zip(cols, tokens, strict=False))

    def metric(group: str, name: str) -> float | None:
        return _num(values[group + name], group + name, line) if group + name in values else None

    def wrong(group: str) -> int | None:
        if group + "wrong" not in values:
            return None  # the pre-2.13 "error" column is judged in summarise()
        return _wrong(values[group + "wrong"], group + "#wrong", line)

    root = values.get("root")
    return NcclRow(
        size=to_int(values["size"], "size", line),
        count=to_int(values["count"], "count", line),
        type=values["type"],
        redop=values.get("redop") or None,
        root=to_int(root, "root", line) if root is not None else None,
        oop_time_us=metric("oop_", "time"),
        oop_algbw_gbps=metric("oop_", "algbw"),
        oop_busbw_gbps=metric("oop_", "busbw"),
        oop_wrong=wrong("oop_"),
        ip_time_us=metric("ip_", "time"),
        ip_algbw_gbps=metric("ip_", "algbw"),
        ip_busbw_gbps=metric("ip_", "busbw"),
        ip_wrong=wrong("ip_"),
        oop_error=metric("oop_", "error"),
        ip_error=metric("ip_", "error"),
    )


def parse_nccl(text: str) -> NcclResult:
    """Parse nccl-tests output; JSON (from ``-J``) is recognised by its leading ``{``."""
    check_text(text, "nccl-tests output")
    if text.lstrip().startswith("{"):
        from .nccl_json import parse_nccl_json

        return parse_nccl_json(text)
    cols: list[str] | None = None
    header_line = 0
    rows: list[NcclRow] = []
    devices: list[NcclDevice] = []
    warnings: list[str] = []
    collective = version = None
    oob: int | None = None
    avg: float | None = None
    last = 0
    for number, raw in numbered_lines(text):
        last = number
        line = _PREFIX.sub("", raw.strip(), count=1).strip()
        log = _NCCL_LOG.search(line)
        if log or not line:
            if log and log.group(1) in ("WARN", "ABORT"):
                warnings.append(line)
            found = _VERSION.search(line)
            version = version or (found and (found.group(1) or found.group(2)))
            continue
        if line.startswith("#"):
            body = line[1:].split()
            if match := _DEVICE.match(line):
                devices.append(_device(match))
            elif match := _OOB.match(line):
                oob = int(match.group(1))
            elif match := _AVG.match(line):
                avg = _num(match.group(1), "Avg bus bandwidth", number)
                if avg is None:
                    raise ParseError("expected a number for Avg bus bandwidth", line=number)
            elif match := _STARTING.match(line):
                collective = collective_from_program(match.group(1))
            elif body[:3] == ["size", "count", "type"]:
                if cols is not None:
                    raise ParseError(
                        f"second results header (first at line {header_line}); expected one "
                        "nccl-tests run per file",
                        line=number,
                    )
                cols, header_line = _columns(body, number), number
            elif found := _VERSION.search(line):
                version = version or found.group(1) or found.group(2)
            continue
        tokens = line.split()
        if cols is None or avg is not None:
            if found := _VERSION.search(line):  # "NCCL version 2.19.3+cuda12.2" alone
                version = version or found.group(1) or found.group(2)
            continue
        if tokens[0].isdigit() or _looks_numeric(tokens, len(cols)):
            if oob is not None:
                raise ParseError(
                    "result row after the '# Out of bounds values' footer", line=number
                )
            rows.append(_row(tokens, cols, number))
    if cols is None:
        raise ParseError(
            "expected an nccl-tests results header ('#  size  count  type ...'); none found",
            line=last,
        )
    if oob is None or avg is None:
        missing = "# Out of bounds values" if oob is None else "# Avg bus bandwidth"
        raise ParseError(
            f"incomplete nccl-tests output: no '{missing}' footer after the last row "
            "(run cut short?)",
            line=last,
        )
    return summarise(
        rows=rows,
        devices=devices,
        collective=collective,
        avg_busbw=avg,
        out_of_bounds=oob,
        nccl_version=version,
        source_format="text",
        nccl_warnings=warnings,
        where_line=header_line,
    )


def _looks_numeric(tokens: list[str], n_cols: int) -> bool:
    """A garbled result row must not be skipped as chatter: catch rows whose first cell
    was damaged by checking whether the rest is mostly numbers."""
    if len(tokens) < n_cols - 2:
        return False
    numeric = sum(bool(re.fullmatch(r"[-+]?[\d.]+(e[-+]?\d+)?|N/A", t)) for t in tokens)
    return numeric * 2 >= len(tokens)


def _device(match: re.Match[str]) -> NcclDevice:
    rank, group, pid, host, device, pci, model = match.groups()
    return NcclDevice(
        rank=int(rank),
        group=int(group) if group is not None else None,
        pid=int(pid),
        host=host,
        device=int(device),
        pci=pci,
        model=model,
    )
