"""Judge for ``nvidia-smi nvlink -s`` / ``-e``: every GPU has its NVLinks up, at speed,
and without errors.

How many links a GPU should have up depends on the board, not on the tool: 18 on an
H100/H200/B200 SXM (NVLink 4/5 through NVSwitch), 12 on an A100 SXM, and on PCIe cards
with NVLink bridges as many as the bridges carry (the real H100 PCIe sample with three
bridges shows 12 active and 6 ``<inactive>``). So ``min_active_links`` is required, per
GPU model, like a bandwidth floor: no floor, no pass.

A link that is down, slow or counting errors fails the check for a human (a bridge or
cable seated badly, fabric manager not running, a bad port): nvidia-smi names the link,
not the part to replace, so nothing here convicts the hardware on its own. A GPU that
is missing from the output is, like every GPU-count check.
"""

from __future__ import annotations

from typing import Any

from validation.parsers.nvidia_smi_nvlink import NvidiaSmiNvlinkResult

from .judging import Findings, Judge, check_gpu_count
from .model import NodeContext
from .thresholds import KeySpec


def _ranges(links: list[int]) -> str:
    return ", ".join(map(str, links)) or "none"


def judge_nvlink(
    result: NvidiaSmiNvlinkResult, th: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    """Active links per GPU vs the floor, link speed vs its floor, error counters vs max."""
    check_gpu_count(f, len(result.gpus), "nvidia-smi nvlink")
    minimum = int(th["min_active_links"])
    speed_floor = th.get("min_link_gbps")
    max_errors = int(th.get("max_link_errors", 0))
    per_gpu: dict[int, dict[str, Any]] = {}
    for gpu in result.gpus:
        who = f"GPU {gpu.index} ({gpu.name})"
        active, inactive = gpu.active_links(), gpu.inactive_links()
        errors = {
            f"link {link.link} {name}": value
            for link in gpu.links
            for name, value in link.counters.items()
            if value
        }
        per_gpu[gpu.index] = {"active": len(active), "inactive": inactive, "errors": errors}
        if result.has_status and len(active) < minimum:
            state = gpu.message if gpu.all_inactive else f"inactive: {_ranges(inactive)}"
            f.fail(f"{who}: {len(active)} NVLinks active, fewer than {minimum} ({state})")
        if speed_floor is not None:
            slow = [
                f"link {link.link} {link.speed_gbps:g} GB/s"
                for link in gpu.links
                if link.active and link.speed_gbps is not None and link.speed_gbps < speed_floor
            ]
            if slow:
                f.fail(
                    f"{who}: {len(slow)} NVLink(s) below {speed_floor:g} GB/s",
                    evidence=slow,
                )
        over = {k: v for k, v in errors.items() if v is not None and v > max_errors}
        if over:
            f.fail(
                f"{who}: NVLink error counters above {max_errors}: "
                + ", ".join(f"{k} = {v}" for k, v in sorted(over.items())),
            )
    if not result.has_status and not result.has_counters:
        f.fail("nvidia-smi nvlink printed no link status and no error counters")
    f.metrics["gpus"] = per_gpu
    f.metrics["checked"] = [
        what
        for what, seen in (("status", result.has_status), ("counters", result.has_counters))
        if seen
    ]
    f.summary = f"{len(result.gpus)} GPUs, each with at least {minimum} NVLinks active" + (
        ", no link errors" if result.has_counters else ""
    )


JUDGES = [
    Judge(
        tools=("nvidia-smi-nvlink",),
        result_type=NvidiaSmiNvlinkResult,
        keys={
            "min_active_links": KeySpec(
                "int",
                "NVLinks each GPU must have active (18 on H100/H200/B200 SXM, 12 on A100 SXM)",
                required=True,
            ),
            "min_link_gbps": KeySpec(
                "number", "floor for each active link's speed (26.562 GB/s on NVLink 4)"
            ),
            "max_link_errors": KeySpec(
                "int", "most errors any one counter of any link may show (nvlink -e)", default=0
            ),
        },
        func=judge_nvlink,
    ),
]
