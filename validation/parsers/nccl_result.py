"""Result type for nccl-tests (``all_reduce_perf`` and siblings), text or ``-J`` JSON.

The headline numbers are the bus bandwidths at the LARGEST message size, not the
footer's "Avg bus bandwidth": the average runs over every size from 8 bytes up, so a
2-node TCPXO run that peaks at ~338 GB/s averages ~71 GB/s. Gates must use the former.
"""

from __future__ import annotations

import dataclasses
import os
import re

from .base import ParseError, Result

COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
    "gather",
    "scatter",
    "hypercube",
)


@dataclasses.dataclass
class NcclRow:
    size: int
    count: int
    type: str
    redop: str | None
    root: int | None
    oop_time_us: float | None
    oop_algbw_gbps: float | None
    oop_busbw_gbps: float | None
    oop_wrong: int | None
    ip_time_us: float | None
    ip_algbw_gbps: float | None
    ip_busbw_gbps: float | None
    ip_wrong: int | None
    # nccl-tests < 2.13 print an ``error`` column (the max relative error of the row)
    # instead of ``#wrong``; the value is kept here and judged in ``summarise``.
    oop_error: float | None = None
    ip_error: float | None = None


@dataclasses.dataclass
class NcclDevice:
    rank: int
    group: int | None
    pid: int | None
    host: str
    device: int
    pci: str
    model: str


@dataclasses.dataclass
class NcclResult(Result):
    tool = "nccl"

    collective: str | None
    collective_inferred: bool
    rows: list[NcclRow]
    max_size_bytes: int
    busbw_inplace_at_max_gbps: float | None
    busbw_outofplace_at_max_gbps: float | None
    avg_busbw_gbps: float
    wrong_total: int
    max_error: float | None
    out_of_bounds: int
    ranks: int
    hosts: list[str]
    gpu_model: str | None
    gpu_models: list[str]
    devices: list[NcclDevice]
    nccl_version: str | None
    source_format: str
    nccl_warnings: list[str]


def collective_from_program(program: str) -> str | None:
    """``./build/all_reduce_perf`` -> ``all_reduce``; None if it is not a known test."""
    name = os.path.basename(program.strip())
    name = re.sub(r"_perf(_mpi)?$", "", name)
    return name if name in COLLECTIVES else None


def infer_collective(rows: list[NcclRow], ranks: int) -> str | None:
    """Best guess when the output does not name the test (older nccl-tests never did).

    Uses what the columns reveal: a root >= 0 means broadcast or reduce (told apart by
    redop), and count * element size against size separates all_reduce/sendrecv
    (count covers the whole buffer) from the per-rank-count ones. all_gather and
    alltoall print identical rows and stay None rather than guessed.
    """
    if not rows:
        return None
    row = rows[-1]
    elem = ELEMENT_SIZES.get(row.type)
    if row.root is not None and row.root >= 0:
        return "broadcast" if row.redop in (None, "none") else "reduce"
    if elem is None or row.count == 0:
        return None
    whole = row.count * elem == row.size
    reducing = row.redop not in (None, "none")
    if whole:
        return "all_reduce" if reducing else "sendrecv"
    if reducing and ranks and row.count * elem * ranks == row.size:
        return "reduce_scatter"
    return None


ELEMENT_SIZES = {
    "int8": 1,
    "uint8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "f8e4m3": 1,
    "f8e5m2": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
}


ELEMENT_TYPES = frozenset(ELEMENT_SIZES)

# nccl-tests 2.x ``DeltaMaxValue(type)``: the largest relative error a row may show.
# A row counts as out of bounds when its error exceeds this times (ranks - 1).
_DELTA_MAX = {
    "half": 1e-2,
    "float16": 1e-2,
    "bfloat16": 1e-2,
    "float": 1e-5,
    "float32": 1e-5,
    "double": 1e-12,
    "float64": 1e-12,
}


def error_tolerance(type_name: str, ranks: int) -> float:
    """The error a legacy ``error`` cell may show before nccl-tests calls the row out of
    bounds: ``DeltaMaxValue(type) * (ranks - 1)``, rank factor 1 when the device lines
    are missing. Integer and unknown types must be exact (nccl-tests uses 1e-200)."""
    return _DELTA_MAX.get(type_name, 0.0) * max(ranks - 1, 1)


def _judge_legacy_errors(rows: list[NcclRow], ranks: int) -> None:
    """Turn legacy ``error`` cells into wrong-row counts with the tool's own tolerance."""
    for row in rows:
        limit = error_tolerance(row.type, ranks)
        if row.oop_error is not None:
            row.oop_wrong = int(row.oop_error > limit)
        if row.ip_error is not None:
            row.ip_wrong = int(row.ip_error > limit)


def summarise(
    *,
    rows: list[NcclRow],
    devices: list[NcclDevice],
    collective: str | None,
    avg_busbw: float,
    out_of_bounds: int,
    nccl_version: str | None,
    source_format: str,
    nccl_warnings: list[str],
    where_line: int | None = None,
) -> NcclResult:
    """Compute the gate numbers from parsed rows.

    When several rows share the largest size (``-d all`` / ``-o all`` runs) the lowest
    bus bandwidth is reported, so the headline never flatters the slowest variant.
    """
    if not rows:
        raise ParseError("expected at least one nccl-tests result row", line=where_line)
    max_size = max(r.size for r in rows)
    at_max = [r for r in rows if r.size == max_size]
    ip = [r.ip_busbw_gbps for r in at_max if r.ip_busbw_gbps is not None]
    oop = [r.oop_busbw_gbps for r in at_max if r.oop_busbw_gbps is not None]
    models = [d.model for d in devices]
    distinct = sorted(set(models))
    ranks = len({d.rank for d in devices})
    _judge_legacy_errors(rows, ranks)
    wrong = sum((r.oop_wrong or 0) + (r.ip_wrong or 0) for r in rows)
    errors = [e for r in rows for e in (r.oop_error, r.ip_error) if e is not None]
    inferred = collective is None
    if inferred:
        collective = infer_collective(rows, ranks)
    return NcclResult(
        collective=collective,
        collective_inferred=inferred and collective is not None,
        rows=rows,
        max_size_bytes=max_size,
        busbw_inplace_at_max_gbps=min(ip) if ip else None,
        busbw_outofplace_at_max_gbps=min(oop) if oop else None,
        avg_busbw_gbps=avg_busbw,
        wrong_total=wrong,
        max_error=max(errors) if errors else None,
        out_of_bounds=out_of_bounds,
        ranks=ranks,
        hosts=sorted({d.host for d in devices}),
        gpu_model=distinct[0] if len(distinct) == 1 else None,
        gpu_models=distinct,
        devices=devices,
        nccl_version=nccl_version,
        source_format=source_format,
        nccl_warnings=nccl_warnings,
    )
