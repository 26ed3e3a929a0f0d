"""Judges for GPU presence and health: ``nvidia-smi`` (XML, CSV, topology) and kernel-log XIDs.

These are the checks whose findings convict hardware: a missing GPU, an uncorrectable
ECC error, a pending or failed row remap, an XID in NVIDIA's reset/reboot/RMA classes.
A driver that differs from the image baseline is a fail too, but never hardware: the
fix is re-imaging, not a return to the vendor.
"""

from __future__ import annotations

from typing import Any

from validation.parsers.nvidia_smi_csv import NvidiaSmiCsvResult
from validation.parsers.nvidia_smi_topo import NvidiaSmiTopoResult
from validation.parsers.nvidia_smi_xml import NvidiaSmiXmlResult, SmiGpu
from validation.parsers.xid import XidEvent, XidResult
from validation.parsers.xid_catalog import ACTION_SEVERITY

from .judging import COMMON_KEYS, Findings, Judge, check_driver, check_gpu_count
from .model import CheckSpec, NodeContext
from .thresholds import KeySpec

_ECC_KEYS = {
    "ecc_uncorrectable_volatile_max": KeySpec(
        "int", "most uncorrectable ECC errors allowed since driver load, per GPU", default=0
    ),
}


def _label(gpu: SmiGpu) -> str:
    return f"GPU {gpu.pci_bus_id} (serial {gpu.serial or '?'}, {gpu.uuid})"


def _identity_facts(f: Findings, gpus: list[dict[str, Any]]) -> None:
    f.fact("gpu_uuids", [g["uuid"] for g in gpus if g.get("uuid")])
    f.fact("gpu_serials", [str(g["serial"]) for g in gpus if g.get("serial")])
    f.fact("vbios", sorted({str(g["vbios"]) for g in gpus if g.get("vbios")}))
    f.fact("gpu_names", sorted({str(g["name"]) for g in gpus if g.get("name")}))
    # Per GPU, in nvidia-smi's order: drift compares each GPU's VBIOS on its own.
    f.fact(
        "gpus",
        [{k: v for k, v in g.items() if v not in (None, "")} for g in gpus],
    )


def judge_smi_xml(
    result: NvidiaSmiXmlResult, th: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    """GPU count, driver, ECC (volatile and lifetime), row remaps, retired pages, ECC mode."""
    gpus = result.gpus
    check_gpu_count(
        f,
        len(gpus),
        "nvidia-smi",
        [f"GPUs seen: {', '.join(g.pci_bus_id for g in gpus) or 'none'}"],
    )
    check_driver(f, result.driver_version, "nvidia-smi", th.get("check_driver", False))
    f.fact("cuda", result.cuda_version)  # the driver's CUDA version, as nvidia-smi shows it
    _identity_facts(
        f,
        [
            {"uuid": g.uuid, "serial": g.serial, "vbios": g.vbios_version, "name": g.product_name}
            for g in gpus
        ],
    )
    volatile_max = th.get("ecc_uncorrectable_volatile_max")
    aggregate_max = th.get("ecc_uncorrectable_aggregate_max")
    per_gpu: dict[str, dict[str, Any]] = {}
    for gpu in gpus:
        label = _label(gpu)
        volatile = gpu.ecc_volatile.uncorrectable
        aggregate = gpu.ecc_aggregate.uncorrectable
        per_gpu[gpu.pci_bus_id] = {
            "ecc_uncorrectable_volatile": volatile,
            "ecc_uncorrectable_aggregate": aggregate,
            "remapped_rows_pending": gpu.remapped_rows_pending,
            "remapped_rows_failure": gpu.remapped_rows_failure,
            "recovery_action": gpu.recovery_action,
        }
        if volatile is not None and volatile_max is not None and volatile > volatile_max:
            f.fail(
                f"{label}: {volatile} uncorrectable ECC error(s) since driver load "
                f"(max {volatile_max})",
                hardware=True,
            )
        if aggregate is not None and aggregate_max is not None and aggregate > aggregate_max:
            f.fail(
                f"{label}: {aggregate} lifetime uncorrectable ECC error(s) (max {aggregate_max})",
                hardware=True,
            )
        elif aggregate and aggregate_max is None:
            f.degrade(f"{label}: {aggregate} lifetime uncorrectable ECC error(s) on record")
        if gpu.remapped_rows_failure:
            f.fail(f"{label}: row remapping failed (no spare rows left)", hardware=True)
        if gpu.remapped_rows_pending:
            f.fail(f"{label}: row remap pending (GPU must be reset before use)", hardware=True)
        if gpu.recovery_action is not None and gpu.recovery_action.lower() != "none":
            f.fail(
                f"{label}: the driver asks for recovery before the GPU is used again: "
                f"{gpu.recovery_action} ({_recovery_advice(gpu.recovery_action)})",
                hardware=True,
            )
        if gpu.retired_pages_pending:
            f.fail(
                f"{label}: page retirement pending (GPU must be reset before use)", hardware=True
            )
        if th.get("require_ecc_enabled") and gpu.ecc_mode is not None and gpu.ecc_mode != "Enabled":
            f.fail(f"{label}: ECC mode is {gpu.ecc_mode}, acceptance requires Enabled")
    f.metrics["gpus"] = per_gpu
    f.summary = (
        f"{len(gpus)} GPUs, driver {result.driver_version}, no uncorrectable ECC, "
        "no pending or failed row remaps, no recovery action asked"
    )


def _recovery_advice(action: str) -> str:
    """NVIDIA's remedy for a recovery action (its GPU memory error management guide, Error
    Recovery and Response Flags): the words differ between drivers, so by keyword."""
    words = action.lower()
    if "reboot" in words:
        return "reboot the node, then run the gates again"
    if "drain" in words:
        return "drain peer-to-peer traffic, reset the GPU, then run the gates again"
    if "reset" in words:
        return "stop its processes, reset it (nvidia-smi -r), then run the gates again"
    return "see NVIDIA's GPU recovery actions"


_HW_SLOWDOWN = ("clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown")
_ECC_FIELD = "ecc.errors.uncorrected.volatile.total"


def judge_smi_csv(
    result: NvidiaSmiCsvResult, th: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    """GPU count, driver, and volatile ECC / HW slowdown when those fields were queried."""
    gpus = result.gpus
    check_gpu_count(
        f,
        len(gpus),
        "nvidia-smi",
        [f"GPUs seen: {', '.join(str(g.get('pci.bus_id', g.get('index'))) for g in gpus)}"],
    )
    check_driver(f, result.driver_version, "nvidia-smi", th.get("check_driver", False))
    _identity_facts(
        f,
        [
            {
                "uuid": g.get("uuid"),
                "serial": g.get("serial"),
                "vbios": g.get("vbios_version"),
                "name": g.get("name"),
            }
            for g in gpus
        ],
    )
    limit = th.get("ecc_uncorrectable_volatile_max")
    for gpu in gpus:
        label = (
            f"GPU {gpu.get('index', '?')} ({gpu.get('pci.bus_id', '?')}, "
            f"serial {gpu.get('serial', '?')})"
        )
        if _ECC_FIELD in result.fields:
            count = gpu.get(_ECC_FIELD)
            if count is None:
                f.degrade(f"{label}: uncorrectable ECC counter not reported ([N/A])")
            elif isinstance(count, int) and limit is not None and count > limit:
                f.fail(
                    f"{label}: {count} uncorrectable ECC error(s) since driver load (max {limit})",
                    hardware=True,
                )
        for field in _HW_SLOWDOWN:
            if str(gpu.get(field, "")).strip().lower() == "active":
                f.degrade(f"{label}: hardware slowdown active (thermal or power brake)")
    ecc_note = ", volatile ECC clean" if _ECC_FIELD in result.fields else ""
    f.summary = f"{len(gpus)} GPUs, driver {result.driver_version}{ecc_note}"


def judge_topo(
    result: NvidiaSmiTopoResult, th: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    """Every GPU pair on NVLink with at least ``min_nvlinks`` links (NV18 on HGX H100)."""
    check_gpu_count(f, result.gpu_count, "nvidia-smi topo -m")
    minimum = th.get("min_nvlinks")
    weakest: int | None = None
    for gpu in result.gpus:
        for peer, link in sorted(gpu.links.items()):
            if not link.startswith("NV"):
                if th.get("require_nvlink"):
                    f.fail(f"{gpu.name} <-> {peer} is {link}, not NVLink")
                continue
            count = int(link[2:]) if link[2:].isdigit() else 0
            weakest = count if weakest is None else min(weakest, count)
            if minimum is not None and count < minimum:
                f.fail(f"{gpu.name} <-> {peer} has {link}, fewer than NV{minimum}")
    f.metrics["min_nvlinks_seen"] = weakest
    if result.gpu_count < 2:
        f.summary = f"{result.gpu_count} GPU: no GPU pairs, so no NVLink to check"
    elif weakest is None:
        f.summary = f"{result.gpu_count} GPUs, no pair on NVLink (not required)"
    else:
        f.summary = f"{result.gpu_count} GPUs, all pairs on NVLink (weakest NV{weakest})"


def _xid_line(event: XidEvent) -> str:
    """One evidence line per event; driver lines say they carry no Xid of their own."""
    where = event.pci or "a GPU the line does not name"
    if event.source == "nvrm":
        condition = f", XID {event.code}'s condition" if event.code is not None else ""
        return (
            f"NVRM {event.mnemonic} ({event.action} class{condition}, no Xid line) "
            f"on {where}: {event.message}"
        )
    cause = f" (caused by XID {'/'.join(map(str, event.caused_by))})" if event.caused_by else ""
    return (
        f"XID {event.code} ({event.action} class, {event.mnemonic}){cause} on {where}: "
        f"{event.message}"
    )


def judge_xid(result: XidResult, th: dict[str, Any], ctx: NodeContext, f: Findings) -> None:
    """XIDs by NVIDIA's action class: reset/reboot/RMA classes convict the hardware.

    The parser's driver-line events (fallen off the bus with no Xid, RmInitAdapter
    failed) and an Xid 45 that names its cause are judged by the class they carry.
    """
    hardware, failing, degraded = (
        set(th.get("hardware_actions", [])),
        set(th.get("fail_actions", [])),
        set(th.get("degraded_actions", [])),
    )
    f.metrics["codes"] = result.codes
    f.metrics["by_action"] = result.by_action
    events = sorted(result.xids, key=lambda e: (ACTION_SEVERITY.index(e.action), e.line))
    ignored: list[str] = []
    for event in events:
        line = _xid_line(event)
        detail = [f"kernel log line {event.line}"]
        kind = f"XID {event.code}" if event.code is not None else event.mnemonic
        if event.action in hardware:
            f.fail(line, hardware=True, evidence=detail, kind=kind)
        elif event.action in failing:
            f.fail(line + " - needs a human", evidence=detail, kind=kind)
        elif event.action in degraded:
            f.degrade(line, evidence=detail, kind=kind)
        else:
            ignored.append(str(event.code if event.code is not None else event.mnemonic))
    if not result.xids:
        f.summary = "no XIDs in the kernel log"
    else:
        f.summary = (
            f"no XIDs in failing classes; {len(ignored)} informational "
            f"({', '.join(sorted(set(ignored)))}) ignored"
        )


def _validate_xid(spec: CheckSpec, th: dict[str, Any]) -> list[str]:
    sets = {k: set(th.get(k, [])) for k in ("hardware_actions", "fail_actions", "degraded_actions")}
    names = list(sets)
    problems = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if sets[a] & sets[b]:
                problems.append(f"{a} and {b} both list {sorted(sets[a] & sets[b])}")
    return problems


_ACTIONS = tuple(ACTION_SEVERITY)

JUDGES = [
    Judge(
        tools=("nvidia-smi-xml",),
        result_type=NvidiaSmiXmlResult,
        keys={
            **COMMON_KEYS,
            **_ECC_KEYS,
            "ecc_uncorrectable_aggregate_max": KeySpec(
                "int",
                "most lifetime uncorrectable ECC errors per GPU; unset: any is noted as degraded",
            ),
            "require_ecc_enabled": KeySpec("bool", "ECC mode must be Enabled", default=True),
        },
        func=judge_smi_xml,
    ),
    Judge(
        tools=("nvidia-smi-csv",),
        result_type=NvidiaSmiCsvResult,
        keys={**COMMON_KEYS, **_ECC_KEYS},
        func=judge_smi_csv,
    ),
    Judge(
        tools=("nvidia-smi-topo",),
        result_type=NvidiaSmiTopoResult,
        keys={
            "require_nvlink": KeySpec(
                "bool", "every GPU pair must be linked by NVLink", default=True
            ),
            "min_nvlinks": KeySpec("int", "fewest NVLinks allowed between any GPU pair"),
        },
        func=judge_topo,
    ),
    Judge(
        tools=("xid",),
        result_type=XidResult,
        keys={
            "hardware_actions": KeySpec(
                "str_list",
                "XID action classes that fail the check as a hardware fault",
                default=["rma", "reboot", "reset"],
                choices=_ACTIONS,
            ),
            "fail_actions": KeySpec(
                "str_list",
                "XID action classes that fail the check for a human to look at",
                default=["investigate", "unknown"],
                choices=_ACTIONS,
            ),
            "degraded_actions": KeySpec(
                "str_list",
                "XID action classes that are noted (degraded) but pass",
                default=["application"],
                choices=_ACTIONS,
            ),
        },
        func=judge_xid,
        validate=_validate_xid,
    ),
]
