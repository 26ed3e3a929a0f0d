"""Judges for bandwidth and throughput tools: nccl-tests, nvbandwidth, fio, iperf3.

A number under its floor is a ``fail`` for a human to look at, never a hardware fault
on its own: slow can mean a bad cable, a wrong NCCL setting or a busy peer, and an RMA
needs a tool that names the part. Within ``degraded_margin_pct`` below the floor the
check is ``degraded`` (admitted, noted). Data errors (nccl ``#wrong``, fio errno, an
iperf3 error) always fail.
"""

from __future__ import annotations

import errno
from typing import Any

from validation.parsers.fio import FioResult
from validation.parsers.iperf3 import Iperf3Result
from validation.parsers.nccl_result import NcclResult
from validation.parsers.nvbandwidth import NvbandwidthResult

from .judging import Findings, Judge
from .model import NodeContext, human_bytes
from .thresholds import KeySpec

D2D_WRITE_CE = "device_to_device_memcpy_write_ce"
_MARGIN = KeySpec("number", "percent below the floor that is degraded rather than fail", default=0)


def compare_floor(f: Findings, value: float, floor: float, margin_pct: float, text: str) -> bool:
    """Fail, degrade or pass ``value`` against ``floor``; ``text`` is the failing line.

    Returns True when the value met the floor outright.
    """
    if value >= floor:
        return True
    if margin_pct and value >= floor * (1 - margin_pct / 100):
        f.degrade(f"{text} (within the {margin_pct:g}% degraded margin)")
    else:
        f.fail(text)
    return False


def _where(ctx: NodeContext) -> str:
    return f"for {ctx.gpu_model} on {ctx.fabric}"


def judge_nccl(result: NcclResult, th: dict[str, Any], ctx: NodeContext, f: Findings) -> None:
    """In-place busbw at the LARGEST size vs the SKU/fabric floor; never the average."""
    f.fact("nccl", result.nccl_version)
    busbw = result.busbw_inplace_at_max_gbps
    size = human_bytes(result.max_size_bytes)
    f.metrics.update(
        collective=result.collective,
        max_size_bytes=result.max_size_bytes,
        busbw_inplace_at_max_gbps=busbw,
        busbw_outofplace_at_max_gbps=result.busbw_outofplace_at_max_gbps,
        avg_busbw_gbps=result.avg_busbw_gbps,
        wrong_total=result.wrong_total,
        max_error=result.max_error,
        out_of_bounds=result.out_of_bounds,
        ranks=result.ranks,
        hosts=result.hosts,
    )
    wanted = th.get("collective")
    if wanted is not None and result.collective != wanted:
        f.fail(
            f"nccl-tests ran {result.collective or 'an unidentified collective'}, "
            f"this check needs {wanted}"
        )
    if result.wrong_total:
        f.fail(
            f"nccl-tests reported {result.wrong_total} wrong result(s) (#wrong): "
            "data corruption on the path"
        )
    if result.out_of_bounds:
        f.fail(f"nccl-tests reported {result.out_of_bounds} out-of-bounds value(s)")
    min_size = th.get("min_size_bytes")
    if min_size is not None and result.max_size_bytes < min_size:
        f.fail(
            f"largest message was {size}, the floor is defined at "
            f"{human_bytes(int(min_size))} (raise -e)"
        )
    if result.ranks == 1:
        # One rank moves nothing between GPUs: all_reduce/all_gather print busbw 0 by
        # definition, sendrecv a local copy (in-place "busbw" in the tens of TB/s).
        f.fail(
            "1 rank: bus bandwidth is not measured (nccl-tests ran on one GPU, no data "
            "crossed NVLink or the network; run it over 2 or more GPUs)"
        )
        return
    floor = float(th["busbw_inplace_at_max_gbps"])
    if busbw is None:
        f.fail(f"no in-place busbw at the largest size ({size})")
        return
    compare_floor(
        f,
        busbw,
        floor,
        th.get("degraded_margin_pct", 0),
        f"busbw {busbw:.1f} GB/s < {floor:.1f} GB/s floor {_where(ctx)} at {size}",
    )
    f.summary = f"busbw {busbw:.1f} GB/s >= {floor:.1f} GB/s floor {_where(ctx)} at {size}"


def judge_nvbandwidth(
    result: NvbandwidthResult, th: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    """The slowest GPU pair of one test (D2D by default) vs the floor."""
    f.fact("nvbandwidth", result.version)
    f.fact("driver", result.driver_version)
    name = th.get("test") or D2D_WRITE_CE
    # Bidirectional tests (v0.8+) print a matrix per direction and a total; the total
    # is what "the test" measures.
    test = result.tests.get(name) or result.tests.get(f"{name}_total")
    if test is None:
        f.fail(f"nvbandwidth did not run {name} (ran: {', '.join(result.tests) or 'nothing'})")
        return
    if test.waived:
        f.fail(f"nvbandwidth waived {name}: not measured")
        return
    f.metrics.update(
        test=name,
        min_gbps=test.min,
        mean_gbps=test.mean,
        max_gbps=test.max,
        sum_gbps=test.sum,
        cov=test.cov,
        gpus=len(test.columns),
    )
    if "GPU(row)" in test.title and len(test.columns) != ctx.gpu_count:
        f.fail(
            f"nvbandwidth {name} measured {len(test.columns)} GPUs, the node has {ctx.gpu_count}"
        )
    if test.min is None:
        f.fail(f"nvbandwidth {name} has no measured cells")
        return
    floor = float(th["min_gbps"])
    slow = [
        f"{test.title}: row {r}, column {c} = {v:.2f} GB/s"
        for r, row in enumerate(test.matrix)
        for c, v in enumerate(row)
        if v is not None and v < floor and not (r == c and "GPU(row)" in test.title)
    ]
    text = (
        f"nvbandwidth {name} min {test.min:.1f} GB/s < {floor:.1f} GB/s floor for {ctx.gpu_model}"
    )
    if not compare_floor(f, test.min, floor, th.get("degraded_margin_pct", 0), text):
        f.evidence.extend(slow[:16] + ([f"... {len(slow) - 16} more"] if len(slow) > 16 else []))
    cov_ceiling = th.get("max_cov")
    if cov_ceiling is not None and test.cov is not None and test.cov > cov_ceiling:
        f.fail(
            f"nvbandwidth {name} coefficient of variation {test.cov:.2f} > {cov_ceiling:.2f} "
            "(uneven between GPU pairs)"
        )
    sum_floor = th.get("sum_min_gbps")
    if sum_floor is not None:
        if test.sum is None:
            f.fail(f"nvbandwidth {name} printed no SUM line, but a SUM floor is set")
        elif test.sum < sum_floor:
            f.fail(f"nvbandwidth {name} SUM {test.sum:.1f} GB/s < {sum_floor:.1f} GB/s floor")
    f.summary = (
        f"nvbandwidth {name} min {test.min:.1f} GB/s >= {floor:.1f} GB/s floor for {ctx.gpu_model}"
    )


_FIO_FLOORS = (
    ("read_bw_min_mib_s", "read bandwidth", "MiB/s"),
    ("write_bw_min_mib_s", "write bandwidth", "MiB/s"),
    ("read_iops_min", "read IOPS", "IOPS"),
    ("write_iops_min", "write IOPS", "IOPS"),
)


def judge_fio(result: FioResult, th: dict[str, Any], ctx: NodeContext, f: Findings) -> None:
    """No job errors; summed bandwidth and IOPS over every job at or above each floor set."""
    f.fact("fio", result.fio_version)
    seen = {
        "read_bw_min_mib_s": result.read_bw_bytes_per_s / 2**20,
        "write_bw_min_mib_s": result.write_bw_bytes_per_s / 2**20,
        "read_iops_min": result.read_iops,
        "write_iops_min": result.write_iops,
    }
    f.metrics.update(
        read_mib_s=round(seen["read_bw_min_mib_s"], 1),
        write_mib_s=round(seen["write_bw_min_mib_s"], 1),
        read_iops=result.read_iops,
        write_iops=result.write_iops,
    )
    for job in result.jobs:
        if job.error:
            name = errno.errorcode.get(job.error, "errno")
            f.fail(f"fio job {job.name}: error {job.error} ({name})")
    shown = []
    for key, what, unit in _FIO_FLOORS:
        if key in th:
            if seen[key] < th[key]:
                f.fail(f"fio {what} {seen[key]:.0f} {unit} < {th[key]:.0f} {unit} floor")
            shown.append(f"{what} {seen[key]:.0f} {unit}")
    f.summary = f"fio: no errors, {', '.join(shown) or 'no floors set'}"


def judge_iperf3(result: Iperf3Result, th: dict[str, Any], ctx: NodeContext, f: Findings) -> None:
    """Received throughput at or above the floor, retransmits under the ceiling if set."""
    f.fact("iperf3", result.version)
    f.metrics.update(
        received_gbps=result.received_gbps,
        retransmits=result.retransmits,
        streams=result.num_streams,
        protocol=result.protocol,
    )
    if not result.ok:
        f.fail(f"iperf3 error: {result.error}")
        return
    floor = float(th["min_received_gbps"])
    gbps = (result.received_bits_per_second or 0) / 1e9
    compare_floor(
        f,
        gbps,
        floor,
        th.get("degraded_margin_pct", 0),
        f"iperf3 received {gbps:.1f} Gbit/s < {floor:.1f} Gbit/s floor on {ctx.fabric}",
    )
    ceiling = th.get("max_retransmits")
    if ceiling is not None:
        if result.retransmits is None:
            f.degrade("iperf3 reported no retransmit count (UDP?), ceiling not checked")
        elif result.retransmits > ceiling:
            f.fail(f"iperf3 {result.retransmits} TCP retransmits > {ceiling:.0f} allowed")
    f.summary = f"iperf3 received {gbps:.1f} Gbit/s >= {floor:.1f} Gbit/s floor on {ctx.fabric}"


JUDGES = [
    Judge(
        tools=("nccl",),
        result_type=NcclResult,
        keys={
            "busbw_inplace_at_max_gbps": KeySpec(
                "number",
                "floor for in-place busbw at the largest message size (GB/s)",
                required=True,
            ),
            "degraded_margin_pct": _MARGIN,
            "min_size_bytes": KeySpec("int", "the run must reach at least this message size"),
            "collective": KeySpec("str", "the collective the output must be (e.g. all_reduce)"),
        },
        func=judge_nccl,
    ),
    Judge(
        tools=("nvbandwidth",),
        result_type=NvbandwidthResult,
        keys={
            "test": KeySpec("str", "nvbandwidth test to judge", default=D2D_WRITE_CE),
            "min_gbps": KeySpec("number", "floor for the slowest GPU pair (GB/s)", required=True),
            "degraded_margin_pct": _MARGIN,
            "sum_min_gbps": KeySpec("number", "floor for the test's SUM line (GB/s)"),
            "max_cov": KeySpec(
                "number", "ceiling for v0.10+'s COEFFICIENT_OF_VARIATION line, if printed"
            ),
        },
        func=judge_nvbandwidth,
    ),
    Judge(
        tools=("fio",),
        result_type=FioResult,
        keys={
            key: KeySpec("number", f"floor for summed {what} ({unit})")
            for key, what, unit in _FIO_FLOORS
        },
        func=judge_fio,
    ),
    Judge(
        tools=("iperf3",),
        result_type=Iperf3Result,
        keys={
            "min_received_gbps": KeySpec("number", "floor for received Gbit/s", required=True),
            "degraded_margin_pct": _MARGIN,
            "max_retransmits": KeySpec("int", "ceiling for TCP retransmits over the run"),
        },
        func=judge_iperf3,
    ),
]
