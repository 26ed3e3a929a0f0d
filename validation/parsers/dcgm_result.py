"""Result type shared by the ``dcgmi diag`` text and JSON parsers.

Both outputs feed the same acceptance gate, so they produce the same shape, and test
names are folded to one spelling across DCGM 3.x ("GPU Memory", "PCIe", "Targeted
Stress") and 4.x ("memory", "pcie", "targeted_stress") so a gate's list of required
tests does not change when a host gets a newer DCGM.
"""

from __future__ import annotations

import dataclasses
import re

from .base import ParseError, Result, worst_status

# DCGM 3.x display names whose 4.x plugin name is not just the snake-cased display name.
_ALIASES = {
    "gpu_memory": "memory",
    "sm_stress": "sm_stress",
    "eud_test": "eud",
    "memtest": "memtest",
    "pulse_test": "pulse_test",
    "nvbandwidth": "nvbandwidth",
}

_STATUS_WORDS = {
    "pass": "Pass",
    "passed": "Pass",
    "fail": "Fail",
    "failed": "Fail",
    "warn": "Warn",
    "warning": "Warn",
    "skip": "Skip",
    "skipped": "Skip",
}


def canonical_test_name(name: str) -> str:
    """``"Targeted Stress"`` and ``"targeted_stress"`` both become ``"targeted_stress"``."""
    key = re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_")
    return _ALIASES.get(key, key)


def normalise_status(word: object, where_line: int | None = None, key: str | None = None) -> str:
    """Map DCGM's status spellings (Pass/PASS/pass/SKIPPED/...) to Pass/Fail/Warn/Skip."""
    if isinstance(word, str):
        status = _STATUS_WORDS.get(word.strip().lower())
        if status:
            return status
    raise ParseError(
        f"expected a status of Pass/Fail/Warn/Skip, got {word!r}", line=where_line, key=key
    )


@dataclasses.dataclass
class DcgmTest:
    name: str
    display_name: str
    category: str | None
    status: str
    gpus: dict[int, str] = dataclasses.field(default_factory=dict)
    warnings: list[str] = dataclasses.field(default_factory=list)
    info: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class DcgmDiagResult(Result):
    """Per-test and per-GPU outcome of one ``dcgmi diag`` run."""

    tool = "dcgmi"

    dcgm_version: str | None
    driver_version: str | None
    gpu_device_ids: list[str]
    tests: dict[str, str]
    overall: str
    details: dict[str, DcgmTest]
    gpus: dict[int, str]
    source_format: str
    runtime_error: str | None = None

    def status_of(self, test: str) -> str | None:
        """Status of a test by any spelling (3.x display name or 4.x plugin name)."""
        return self.tests.get(canonical_test_name(test))

    def passed(self, test: str, *, allow_warn: bool = False) -> bool:
        """Did required test ``test`` pass?

        A Skip has NOT passed: DCGM skips tests it could not run (missing plugin, MIG,
        unsupported SKU), and admitting a host on a skipped memory test would admit it
        untested. A test missing from the output has not passed either.
        """
        status = self.status_of(test)
        return status == "Pass" or (allow_warn and status == "Warn")

    def missing_or_not_passed(self, required: list[str], *, allow_warn: bool = False) -> list[str]:
        """The subset of ``required`` that a gate must reject, in the order given."""
        return [t for t in required if not self.passed(t, allow_warn=allow_warn)]


@dataclasses.dataclass
class DcgmDiagJsonResult(DcgmDiagResult):
    """Same shape as the text result; only the registry name differs."""

    tool = "dcgmi-json"


def build_result(
    *,
    cls: type[DcgmDiagResult],
    tests: list[DcgmTest],
    dcgm_version: str | None,
    driver_version: str | None,
    gpu_device_ids: list[str],
    source_format: str,
    runtime_error: str | None = None,
) -> DcgmDiagResult:
    """Assemble the result; duplicate names (3.x prints some twice) fold to the worst."""
    details: dict[str, DcgmTest] = {}
    for test in tests:
        if test.name in details:
            prior = details[test.name]
            prior.status = worst_status([prior.status, test.status])
            for gpu, status in test.gpus.items():
                prior.gpus[gpu] = worst_status([prior.gpus.get(gpu, "Pass"), status])
            prior.warnings.extend(test.warnings)
            prior.info.extend(test.info)
        else:
            details[test.name] = test
    per_gpu: dict[int, list[str]] = {}
    for test in details.values():
        for gpu, status in test.gpus.items():
            per_gpu.setdefault(gpu, []).append(status)
    statuses = [t.status for t in details.values()]
    overall = worst_status(statuses) if statuses else "Fail"
    if runtime_error:
        overall = "Fail"
    return cls(
        dcgm_version=dcgm_version,
        driver_version=driver_version,
        gpu_device_ids=gpu_device_ids,
        tests={name: t.status for name, t in details.items()},
        overall=overall,
        details=details,
        gpus={gpu: worst_status(s) for gpu, s in sorted(per_gpu.items())},
        source_format=source_format,
        runtime_error=runtime_error,
    )
