"""The machinery every judge shares: the ``Judge`` record, the ``Findings`` collector
that turns a judge's observations into one ``Verdict``, and the checks several tools
repeat (GPU count, driver baseline).

A judge never builds a Verdict by hand. It reports findings (``fail``, ``degrade``,
``metric``, ``fact``) and ``Findings.verdict()`` applies the rules once, the same way
for every tool: any failure fails; a hardware failure is the headline and is only
credited when the check is marked ``hardware_evidence``; the reason is one line.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from .model import DEGRADED, FAIL, PASS, CheckSpec, NodeContext, Verdict, one_line
from .thresholds import KeySpec

JudgeFunc = Callable[[Any, dict[str, Any], NodeContext, "Findings"], None]
ValidateFunc = Callable[[CheckSpec, dict[str, Any]], list[str]]


@dataclasses.dataclass(frozen=True)
class Judge:
    """How one tool's parsed output is judged.

    ``keys`` is the complete list of thresholds the judge reads; a profile using any
    other key is refused at load time. ``validate`` is an optional load-time hook that
    sees the check and its thresholds resolved for one GPU model/fabric pair (it is
    called for every declared pair) and returns problems, e.g. a DCGM level in the
    command that does not run a required test.
    """

    tools: tuple[str, ...]
    result_type: type | tuple[type, ...]
    keys: dict[str, KeySpec]
    func: JudgeFunc
    validate: ValidateFunc | None = None


class Findings:
    """Collects what a judge saw; ``verdict()`` turns it into a Verdict."""

    def __init__(self, spec: CheckSpec, context: NodeContext, thresholds: dict[str, Any]):
        self.spec = spec
        self.context = context
        # (reason, hardware, kind) and (reason, kind): the kind ("XID 13"), where the judge
        # says one, lets a headline's "+4 more" name the rest, so other codes are not hidden.
        self.failures: list[tuple[str, bool, str]] = []
        self.degradations: list[tuple[str, str]] = []
        self.evidence: list[str] = []
        self.metrics: dict[str, Any] = {"thresholds": dict(thresholds)}
        self.facts: dict[str, Any] = {}
        self.summary = ""

    def fail(
        self, reason: str, *, hardware: bool = False, evidence: Sequence[str] = (), kind: str = ""
    ) -> None:
        """Record a failure; ``evidence`` lines add detail beyond the reason itself."""
        self.failures.append((one_line(reason), hardware, kind))
        self.evidence.append(("[hardware] " if hardware else "") + one_line(reason))
        self.evidence.extend(one_line(line, 1000) for line in evidence)

    def degrade(self, reason: str, *, evidence: Sequence[str] = (), kind: str = "") -> None:
        """Record something that does not fail the check but must be noted."""
        self.degradations.append((one_line(reason), kind))
        self.evidence.append("[degraded] " + one_line(reason))
        self.evidence.extend(one_line(line, 1000) for line in evidence)

    def fact(self, key: str, value: Any) -> None:
        """A fact is only recorded when the tool actually reported it."""
        if value not in (None, "", [], {}):
            self.facts[key] = value

    def verdict(self) -> Verdict:
        hardware = [r for r, hw, _ in self.failures if hw]
        credited = bool(hardware) and self.spec.hardware_evidence
        if hardware and not credited:
            self.evidence.append(
                f"hardware fault not credited: check {self.spec.name!r} is not marked "
                "hardware_evidence in its profile"
            )
        if self.failures:
            status = FAIL
            first = next(i for i, (_, hw, _) in enumerate(self.failures) if hw or not hardware)
            more = len(self.failures) - 1
            words = f"more problem{'s' if more > 1 else ''}"
            kinds = [kind for _, _, kind in self.failures]
            reason = self.failures[first][0] + _more(more, words, kinds, first)
        elif self.degradations:
            status = DEGRADED
            more = len(self.degradations) - 1
            kinds = [kind for _, kind in self.degradations]
            reason = self.degradations[0][0] + _more(more, "more", kinds, 0)
        else:
            status = PASS
            reason = self.summary or f"{self.spec.name}: all rules passed"
        return Verdict(
            status=status,
            reason=reason,
            metrics=self.metrics,
            hardware_fault=credited,
            evidence=self.evidence,
            facts=self.facts,
            check=self.spec.name,
            required=self.spec.required,
        )


_KINDS_SHOWN = 6  # a reason stays one line: the commonest kinds, the rest in the evidence


def _more(count: int, words: str, kinds: list[str], headline: int) -> str:
    """ " (+4 more: XID 13 ×3, XID 31)": the rest, named by kind where every one has one."""
    if not count:
        return ""
    rest = [kind for i, kind in enumerate(kinds) if i != headline]
    if not all(rest):
        return f" (+{count} {words})"
    tally = Counter(rest)
    shown = [f"{kind} ×{n}" if n > 1 else kind for kind, n in tally.most_common(_KINDS_SHOWN)]
    others = "" if len(tally) <= _KINDS_SHOWN else ", …"
    return f" (+{count} {words}: {', '.join(shown)}{others})"


def check_gpu_count(findings: Findings, seen: int, what: str, evidence: Sequence[str] = ()) -> None:
    """Fewer GPUs than the node record is a missing GPU (hardware); more is a record error."""
    expected = findings.context.gpu_count
    findings.metrics["gpu_count"] = seen
    if seen < expected:
        findings.fail(
            f"{what} sees {seen} of {expected} GPUs on {findings.context.hostname}: "
            f"{expected - seen} missing",
            hardware=True,
            evidence=list(evidence),
        )
    elif seen > expected:
        findings.fail(
            f"{what} sees {seen} GPUs but the node record says {expected}; fix the inventory",
            evidence=list(evidence),
        )


def check_driver(findings: Findings, seen: str | None, what: str, enabled: bool) -> None:
    """The driver must equal the image baseline; a mismatch is an imaging problem, not
    hardware. A missing baseline fails too: without it the rule would silently pass."""
    findings.fact("driver", seen)
    if not enabled:
        return
    expected = findings.context.expected.get("driver")
    if not expected:
        findings.fail(f"no driver baseline in the node context to compare {what}'s driver with")
    elif seen is None:
        findings.fail(f"{what} did not report a driver version (baseline {expected})")
    elif seen.strip() != expected.strip():
        findings.fail(f"driver {seen} != image baseline {expected} ({what})")


COMMON_KEYS = {
    "check_driver": KeySpec(
        "bool", "compare the reported driver with context.expected['driver']", default=True
    ),
}
