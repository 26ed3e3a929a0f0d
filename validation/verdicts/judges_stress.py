"""Judges for the stress tools that exercise the GPUs: ``dcgmi diag`` and gpu-burn.

DCGM: every required test must be ``Pass``. A Skip has not passed (DCGM skips what it
could not run), a Warn is noted as degraded unless the profile says warnings fail, and a
Fail of a hardware test (memory, pcie, diagnostic, stress/power, bandwidth, memtest,
pulse ...) convicts the hardware. A runtime error means DCGM itself broke: a fail for a
human, not an RMA. gpu-burn: the final per-GPU ``OK``/``FAULTY`` line is the verdict.
"""

from __future__ import annotations

import re
from typing import Any

from validation.parsers.base import worst_status
from validation.parsers.dcgm_result import DcgmDiagResult, canonical_test_name
from validation.parsers.gpu_burn import GpuBurnResult

from .judging import COMMON_KEYS, Findings, Judge, check_driver
from .model import CheckSpec, NodeContext, one_line
from .thresholds import KeySpec

HARDWARE_TESTS = (
    "memory",
    "pcie",
    "diagnostic",
    "targeted_stress",
    "targeted_power",
    "memory_bandwidth",
    "sm_stress",
    "pulse",
    "pulse_test",
    "memtest",
    "eud",
    "nvbandwidth",
    "page_retirement_row_remap",
    "inforom",
)
# Lowest ``dcgmi diag -r`` level that runs each test (DCGM user guide run levels).
MIN_LEVEL = {
    "software": 1,
    "memory": 2,
    "pcie": 2,
    "diagnostic": 3,
    "memory_bandwidth": 3,
    "targeted_stress": 3,
    "targeted_power": 3,
    "sm_stress": 3,
    "nvbandwidth": 3,
    "memtest": 4,
    "pulse_test": 4,
    "pulse": 4,
}
_NAMED_LEVELS = {"quick": 1, "short": 1, "medium": 2, "long": 3, "xlong": 4}
# DCGM 3.x prints the 4.x "software" plugin as these separate deployment checks.
SOFTWARE_3X = (
    "denylist",
    "nvml_library",
    "cuda_main_library",
    "cuda_toolkit_libraries",
    "permissions_and_os_blocks",
    "persistence_mode",
    "environment_variables",
    "page_retirement_row_remap",
    "graphics_processes",
    "inforom",
    "fabric_manager",
)
_RUN = re.compile(r"(?:^|\s)(?:-r|--run)(?:\s+|=)?[\"']?(\w+)")


def command_level(command: str) -> int | None:
    """``dcgmi diag -r 3 -j`` -> 3; named levels map to numbers; a test list -> None."""
    match = _RUN.search(command)
    if not match:
        return None
    word = match.group(1).lower()
    return int(word) if word.isdigit() else _NAMED_LEVELS.get(word)


def _status(result: DcgmDiagResult, name: str) -> tuple[str | None, str]:
    """Status of ``name``; "software" falls back to the DCGM 3.x deployment checks."""
    status = result.tests.get(name)
    if status is not None or name != "software":
        return status, name
    parts = [result.tests[t] for t in SOFTWARE_3X if t in result.tests]
    return (worst_status(parts) if parts else None), "software (3.x deployment checks)"


def judge_dcgm(result: DcgmDiagResult, th: dict[str, Any], ctx: NodeContext, f: Findings) -> None:
    """Required tests Pass; Fail of a hardware test is a hardware fault."""
    f.fact("dcgm", result.dcgm_version)
    f.fact("gpu_device_ids", result.gpu_device_ids)
    check_driver(f, result.driver_version, "dcgmi", th.get("check_driver", False))
    if result.runtime_error:
        f.fail(f"dcgmi runtime error (DCGM did not complete): {result.runtime_error}")
    hardware = {canonical_test_name(t) for t in th.get("hardware_tests", [])}
    required = [canonical_test_name(t) for t in th["required_tests"]]
    f.metrics["tests"] = dict(result.tests)
    f.metrics["overall"] = result.overall
    f.metrics["level"] = th.get("level")
    for name in required:
        status, shown = _status(result, name)
        if status is None:
            f.fail(f"required DCGM test {name} did not run (absent from the output)")
        elif status == "Skip":
            f.fail(f"required DCGM test {shown} was skipped; a skip is not a pass")
    for name, status in result.tests.items():
        detail = result.details[name]
        failing = sorted(g for g, s in detail.gpus.items() if s in ("Fail", "Warn"))
        where = f" on GPU {', '.join(map(str, failing))}" if failing else ""
        warning = one_line(" ".join(detail.warnings), 160)
        lines = [f"DCGM {name} warning: {w}" for w in detail.warnings]
        lines += [f"DCGM {name} GPU {g}: {s}" for g, s in sorted(detail.gpus.items())]
        text = f"DCGM {name}: {status}{where}" + (f": {warning}" if warning else "")
        if status == "Fail":
            f.fail(text, hardware=name in hardware, evidence=lines)
        elif status == "Warn" and th.get("warn_is_fail"):
            f.fail(text + " (warnings fail this check)", evidence=lines)
        elif status == "Warn":
            f.degrade(text, evidence=lines)
    level = th.get("level")
    f.summary = (
        f"DCGM {result.dcgm_version or '?'}{f' level {level}' if level else ''}: "
        f"{len(required)} required tests Pass"
    )


def _validate_dcgm(spec: CheckSpec, th: dict[str, Any]) -> list[str]:
    problems = []
    from_command = command_level(spec.command)
    level = th.get("level")
    if level is not None and from_command is not None and level != from_command:
        problems.append(f"thresholds.level is {level} but the command runs -r {from_command}")
    level = level if level is not None else from_command
    if level is None:
        return problems
    for test in th.get("required_tests", []):
        needs = MIN_LEVEL.get(canonical_test_name(test))
        if needs is not None and needs > level:
            problems.append(
                f"required test {test!r} only runs at level {needs} or above, "
                f"but this check runs level {level}"
            )
    return problems


def judge_gpu_burn(
    result: GpuBurnResult, th: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    """Every GPU ``OK`` and computing to the end; ``FAULTY`` is a hardware fault.

    gpu-burn prints OK for a GPU that never computed or died, so the progress records
    decide too: a GPU with nothing processed or that died fails, named, and so does a
    run whose reports stopped short of 100%.
    """
    f.fact("gpu_uuids", [result.uuids[g] for g in sorted(result.uuids)])
    f.fact("gpu_names", sorted(set(result.models.values())))
    f.metrics.update(
        gflops=result.gflops,
        gflops_total=result.gflops_total,
        errors=result.errors_total,
        temps_c=result.temps_c,
        gpus=result.gpus,
        processed=result.processed,
        progress_pct=result.progress_pct,
    )
    tested = len(result.gpus)
    if tested != ctx.gpu_count:
        f.fail(f"gpu-burn tested {tested} GPUs, the node has {ctx.gpu_count}")
    floor = th.get("min_gflops_per_gpu")
    for gpu, state in result.gpus.items():
        who = f"GPU {gpu}" + (f" ({result.uuids[gpu]})" if gpu in result.uuids else "")
        rate = result.gflops.get(gpu)
        if state == "FAULTY":
            f.fail(
                f"gpu-burn {who}: FAULTY, {result.errors_total.get(gpu, 0)} computation "
                f"errors in {result.faulty_intervals.get(gpu, 0)} interval(s)",
                hardware=True,
            )
        if gpu in result.died:
            f.fail(f"gpu-burn {who}: its process died (DIED!), though printed {state}")
        elif gpu in result.idle:
            f.fail(f"gpu-burn {who}: computed nothing (0 processed, 0 Gflop/s), printed {state}")
        elif not rate:
            f.fail(f"gpu-burn {who}: no Gflop/s reported (did it compute at all?)")
        elif floor is not None and rate < floor:
            f.fail(
                f"gpu-burn {who}: {rate:.0f} Gflop/s < {floor:.0f} Gflop/s floor "
                f"for {ctx.gpu_model}"
            )
    if result.progress_pct is not None and result.progress_pct < 100.0:
        f.fail(
            f"gpu-burn's last progress report is at {result.progress_pct:.1f}%: the GPUs "
            "stopped reporting before the end of the run"
        )
    if result.force_killed:
        f.degrade("gpu-burn had to SIGKILL its GPU processes (they ignored SIGTERM)")
    lowest = min(result.gflops.values()) if result.gflops else 0
    f.summary = f"gpu-burn: {tested} GPUs OK, slowest {lowest:.0f} Gflop/s"


JUDGES = [
    Judge(
        tools=("dcgmi", "dcgmi-json"),
        result_type=DcgmDiagResult,
        keys={
            **COMMON_KEYS,
            "required_tests": KeySpec(
                "str_list", "DCGM tests that must Pass (3.x or 4.x spelling)", required=True
            ),
            "hardware_tests": KeySpec(
                "str_list", "tests whose Fail is a hardware fault", default=list(HARDWARE_TESTS)
            ),
            "warn_is_fail": KeySpec("bool", "a Warn fails instead of degrading", default=False),
            "level": KeySpec("int", "the -r level the command runs (checked against it)"),
        },
        func=judge_dcgm,
        validate=_validate_dcgm,
    ),
    Judge(
        tools=("gpu-burn",),
        result_type=GpuBurnResult,
        keys={"min_gflops_per_gpu": KeySpec("number", "slowest GPU's last Gflop/s reading")},
        func=judge_gpu_burn,
    ),
]
