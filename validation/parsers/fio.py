"""fio ``--output-format=json`` output.

fio writes warnings ("fio: this platform does not support process shared mutexes",
"note: both iodepth >= 1 and synchronous I/O engine...") to stdout before the JSON, so
everything before the first line opening with ``{`` is skipped. ``bw`` is KiB/s and
``bw_bytes`` bytes/s; a non-zero per-job ``error`` is an errno from the job and fails it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import ParseError, Result, check_text, get_path, load_json_object


@dataclasses.dataclass
class FioDirection:
    bw_bytes_per_s: float
    bw_kib_per_s: float
    iops: float
    io_bytes: int
    runtime_ms: int
    clat_mean_ns: float | None


@dataclasses.dataclass
class FioJob:
    name: str
    error: int
    read: FioDirection | None
    write: FioDirection | None


@dataclasses.dataclass
class FioResult(Result):
    tool = "fio"

    fio_version: str | None
    jobs: list[FioJob]
    read_bw_bytes_per_s: float
    write_bw_bytes_per_s: float
    read_iops: float
    write_iops: float
    errors: int
    ok: bool


def _num(block: dict[str, Any], key: str, where: str) -> float:
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(f"expected a number, got {value!r}", key=f"{where}.{key}")
    return float(value)


def _direction(job: dict[str, Any], name: str, where: str) -> FioDirection | None:
    block = job.get(name)
    if block is None:
        return None
    if not isinstance(block, dict):
        raise ParseError("expected an object", key=f"{where}.{name}")
    here = f"{where}.{name}"
    io_bytes = int(_num(block, "io_bytes", here))
    if io_bytes == 0:
        return None
    bw_kib = _num(block, "bw", here)
    bw_bytes = _num(block, "bw_bytes", here) if "bw_bytes" in block else bw_kib * 1024
    clat = c if isinstance(c := block.get("clat_ns"), dict) else {}
    mean = clat.get("mean")
    return FioDirection(
        bw_bytes_per_s=bw_bytes,
        bw_kib_per_s=bw_kib,
        iops=_num(block, "iops", here),
        io_bytes=io_bytes,
        runtime_ms=int(_num(block, "runtime", here)),
        clat_mean_ns=float(mean) if isinstance(mean, int | float) else None,
    )


def parse_fio(text: str) -> FioResult:
    """Parse fio JSON: per-job read/write bandwidth, IOPS and error."""
    check_text(text, "fio JSON output")
    doc = load_json_object(text, "fio --output-format=json")
    raw_jobs = get_path(doc, "jobs", list, "the list of fio jobs")
    if not raw_jobs:
        raise ParseError("expected at least one fio job", key="jobs")
    jobs = []
    for index, raw in enumerate(raw_jobs):
        where = f"jobs[{index}]"
        if not isinstance(raw, dict):
            raise ParseError("expected a job object", key=where)
        error = raw.get("error")
        if isinstance(error, bool) or not isinstance(error, int):
            raise ParseError(f"expected an integer error code, got {error!r}", key=where + ".error")
        jobs.append(
            FioJob(
                name=str(raw.get("jobname", f"job{index}")),
                error=error,
                read=_direction(raw, "read", where),
                write=_direction(raw, "write", where),
            )
        )
    errors = sum(1 for j in jobs if j.error)
    version = doc.get("fio version")
    return FioResult(
        fio_version=str(version) if version is not None else None,
        jobs=jobs,
        read_bw_bytes_per_s=sum(j.read.bw_bytes_per_s for j in jobs if j.read),
        write_bw_bytes_per_s=sum(j.write.bw_bytes_per_s for j in jobs if j.write),
        read_iops=round(sum(j.read.iops for j in jobs if j.read), 3),
        write_iops=round(sum(j.write.iops for j in jobs if j.write), 3),
        errors=errors,
        ok=errors == 0,
    )
