"""gpu-burn (``gpu_burn <seconds>``) output.

The verdict is the final ``Tested N GPUs:`` block with one ``GPU i: OK|FAULTY`` line per
GPU; without that block the run was killed or cut off and nothing is known. Progress
lines (``100.0%  proc'd: 5600 (51402 Gflop/s)   errors: 0   temps: 56 C``, with
`` - `` between GPUs on multi-GPU hosts) give Gflop/s and per-interval error counts.
"""

from __future__ import annotations

import dataclasses
import re

from .base import ParseError, Result, check_text, numbered_lines

_TESTED = re.compile(r"^Tested (\d+) GPUs?:$")
_VERDICT = re.compile(r"^GPU (\d+): (\S+)$")
_IDENTITY = re.compile(r"^GPU (\d+): (.+?) \(UUID: (\S+?)\)$")
_PROGRESS = re.compile(r"^\d+(?:\.\d+)?%\s+proc'd:")
_GFLOPS = re.compile(r"\((\d+(?:\.\d+)?) Gflop/s\)")


@dataclasses.dataclass
class GpuBurnResult(Result):
    tool = "gpu-burn"

    gpus: dict[int, str]
    gflops: dict[int, float]
    gflops_total: float | None
    errors_total: dict[int, int]
    faulty_intervals: dict[int, int]
    temps_c: dict[int, int]
    models: dict[int, str]
    uuids: dict[int, str]
    ok: bool


def _split_field(line: str, label: str) -> list[str]:
    """Values of ``label: a - b - c`` up to the next label, one per GPU."""
    match = re.search(rf"{label}:\s*(.*?)(?:\s{{2,}}[a-z]+:|$)", line)
    if not match:
        return []
    return [part.strip() for part in match.group(1).split(" - ")]


def parse_gpu_burn(text: str) -> GpuBurnResult:
    """Parse gpu-burn stdout: final per-GPU verdicts plus throughput and error counts."""
    check_text(text, "gpu-burn output")
    gflops: dict[int, float] = {}
    errors: dict[int, int] = {}
    faulty: dict[int, int] = {}
    temps: dict[int, int] = {}
    models: dict[int, str] = {}
    uuids: dict[int, str] = {}
    verdicts: dict[int, str] = {}
    expected: int | None = None
    tested_line = 0
    for number, raw in numbered_lines(text):
        line = raw.strip()
        if match := _TESTED.match(line):
            expected, tested_line, verdicts = int(match.group(1)), number, {}
            continue
        if expected is not None and (match := _VERDICT.match(line)):
            if match.group(2) not in ("OK", "FAULTY"):
                raise ParseError(
                    f"expected 'OK' or 'FAULTY' for GPU {match.group(1)}, got {match.group(2)!r}",
                    line=number,
                )
            verdicts[int(match.group(1))] = match.group(2)
            continue
        if match := _IDENTITY.match(line):
            models[int(match.group(1))] = match.group(2)
            uuids[int(match.group(1))] = match.group(3)
            continue
        if _PROGRESS.match(line):
            _progress(line, number, gflops, errors, faulty, temps)
    if expected is None:
        raise ParseError(
            "incomplete gpu-burn output: no final 'Tested N GPUs:' block (run cut short?)"
        )
    if len(verdicts) != expected:
        raise ParseError(
            f"expected {expected} 'GPU i: OK|FAULTY' lines after 'Tested {expected} GPUs:', "
            f"got {len(verdicts)}",
            line=tested_line,
        )
    return GpuBurnResult(
        gpus=dict(sorted(verdicts.items())),
        gflops=gflops,
        gflops_total=round(sum(gflops.values()), 3) if gflops else None,
        errors_total=errors,
        faulty_intervals=faulty,
        temps_c=temps,
        models=models,
        uuids=uuids,
        ok=all(v == "OK" for v in verdicts.values()) and bool(verdicts),
    )


def _progress(
    line: str,
    number: int,
    gflops: dict[int, float],
    errors: dict[int, int],
    faulty: dict[int, int],
    temps: dict[int, int],
) -> None:
    """Fold one progress line in: last Gflop/s wins, errors add up across intervals."""
    rates = _GFLOPS.findall(line)
    error_values = _split_field(line, "errors")
    if not rates or not error_values:
        raise ParseError(
            "expected '(N Gflop/s)' and 'errors: N' in a gpu-burn progress line", line=number
        )
    for gpu, rate in enumerate(rates):
        gflops[gpu] = float(rate)
    for gpu, value in enumerate(error_values):
        match = re.match(r"^(\d+)", value)
        if not match:
            raise ParseError(f"expected an error count, got {value!r}", line=number)
        count = int(match.group(1))
        errors[gpu] = errors.get(gpu, 0) + count
        faulty[gpu] = faulty.get(gpu, 0) + (1 if count else 0)
    for gpu, value in enumerate(_split_field(line, "temps")):
        match = re.match(r"^(\d+)\s*C", value)
        if match:
            temps[gpu] = int(match.group(1))
