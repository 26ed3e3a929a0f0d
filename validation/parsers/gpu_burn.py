"""gpu-burn (``gpu_burn <seconds>``) output.

The final ``Tested N GPUs:`` block has one ``GPU i: OK|FAULTY`` line per GPU; without
that block the run was cut off and nothing is known. gpu-burn prints FAULTY only for
computation errors, so "OK" alone proves nothing: a GPU whose process never reported
(``0 (0 Gflop/s)`` in the last progress record), died (``-1`` processed, ``(DIED!)``), or
a run whose reports stopped short of 100% is still printed OK. ``ok`` is true only when
every GPU is OK, computed, and the run reported to its end.

Progress records (``100.0%  proc'd: 5600 (51402 Gflop/s)   errors: 0   temps: 56 C``,
`` - `` between GPUs) are repainted with a carriage return; captures that lost the
returns glue several records on one line, so records are split at each ``NN.N%  proc'd:``.
"""

from __future__ import annotations

import dataclasses
import re

from .base import ParseError, Result, check_text, numbered_lines

_TESTED = re.compile(r"^Tested (\d+) GPUs?:$")
_VERDICT = re.compile(r"^GPU (\d+): (\S+)$")
_IDENTITY = re.compile(r"^GPU (\d+): (.+?) \(UUID: (\S+?)\)$")
_PROGRESS = re.compile(r"^\d+(?:\.\d+)?%\s+proc'd:")
_RECORD = re.compile(r"(?<!\S)(?=\d+(?:\.\d+)?%\s+proc'd:)")
_GFLOPS = re.compile(r"(-?\d+) \((\d+(?:\.\d+)?) Gflop/s\)")
_FORCE_KILLED = "Killing processes with SIGKILL"


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
    processed: dict[int, int] = dataclasses.field(default_factory=dict)
    idle: list[int] = dataclasses.field(default_factory=list)
    died: list[int] = dataclasses.field(default_factory=list)
    progress_pct: float | None = None
    force_killed: bool = False


def _split_field(line: str, label: str) -> list[str]:
    """Values of ``label: a - b - c`` up to the next label, one per GPU."""
    match = re.search(rf"{label}:\s*(.*?)(?:\s{{2,}}[a-z]+:|$)", line)
    if not match:
        return []
    return [part.strip() for part in match.group(1).split(" - ")]


class _Progress:
    """The per-GPU state the progress records leave behind: last values win, errors add."""

    def __init__(self) -> None:
        self.gflops: dict[int, float] = {}
        self.processed: dict[int, int] = {}
        self.errors: dict[int, int] = {}
        self.faulty: dict[int, int] = {}
        self.temps: dict[int, int] = {}
        self.died: set[int] = set()
        self.pct: float | None = None

    def record(self, text: str, number: int) -> None:
        rates = _GFLOPS.findall(text)
        error_values = _split_field(text, "errors")
        if not rates or not error_values:
            raise ParseError(
                "expected '(N Gflop/s)' and 'errors: N' in a gpu-burn progress line", line=number
            )
        self.pct = float(text.split("%", 1)[0])
        for gpu, (count, rate) in enumerate(rates):
            self.gflops[gpu] = float(rate)
            self.processed[gpu] = int(count)
            if int(count) < 0:
                self.died.add(gpu)
        for gpu, value in enumerate(error_values):
            match = re.match(r"^(\d+)", value)
            if not match:
                raise ParseError(f"expected an error count, got {value!r}", line=number)
            count = int(match.group(1))
            self.errors[gpu] = self.errors.get(gpu, 0) + count
            self.faulty[gpu] = self.faulty.get(gpu, 0) + (1 if count else 0)
            if "DIED" in value:
                self.died.add(gpu)
        for gpu, value in enumerate(_split_field(text, "temps")):
            match = re.match(r"^(\d+)\s*C", value)
            if match:
                self.temps[gpu] = int(match.group(1))


def _without_verdicts(progress: _Progress) -> str:
    """Why there is no ``Tested N GPUs:`` block: a GPU's test process that died before the
    end makes gpu-burn abort ("No clients are alive!", on its stderr, as is the cause: an
    invalid device ordinal, out of memory), which is not a run cut short from outside."""
    if progress.died:
        gpus = ", ".join(str(g) for g in sorted(progress.died))
        at = progress.pct or 0.0
        return f"gpu-burn aborted: GPU {gpus}'s test process died (DIED!) at {at:.1f}%"
    return "incomplete gpu-burn output: no final 'Tested N GPUs:' block (run cut short?)"


def parse_gpu_burn(text: str) -> GpuBurnResult:
    """Parse gpu-burn stdout: final per-GPU verdicts plus throughput and error counts."""
    check_text(text, "gpu-burn output")
    progress = _Progress()
    models: dict[int, str] = {}
    uuids: dict[int, str] = {}
    verdicts: dict[int, str] = {}
    expected: int | None = None
    tested_line = 0
    force_killed = False
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
        force_killed = force_killed or line.startswith(_FORCE_KILLED)
        if _PROGRESS.match(line):
            for record in _RECORD.split(line):
                if record.strip():
                    progress.record(record.strip(), number)
    if expected is None:
        raise ParseError(_without_verdicts(progress))
    if len(verdicts) != expected:
        raise ParseError(
            f"expected {expected} 'GPU i: OK|FAULTY' lines after 'Tested {expected} GPUs:', "
            f"got {len(verdicts)}",
            line=tested_line,
        )
    idle = sorted(g for g in verdicts if progress.processed.get(g, 0) == 0)
    died = sorted(progress.died)
    reached_end = progress.pct is not None and progress.pct >= 100.0
    return GpuBurnResult(
        gpus=dict(sorted(verdicts.items())),
        gflops=progress.gflops,
        gflops_total=round(sum(progress.gflops.values()), 3) if progress.gflops else None,
        errors_total=progress.errors,
        faulty_intervals=progress.faulty,
        temps_c=progress.temps,
        models=models,
        uuids=uuids,
        ok=bool(verdicts)
        and all(v == "OK" for v in verdicts.values())
        and not idle
        and not died
        and reached_end,
        processed=progress.processed,
        idle=idle,
        died=died,
        progress_pct=progress.pct,
        force_killed=force_killed,
    )
