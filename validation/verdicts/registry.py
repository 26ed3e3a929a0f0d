"""One judge per tool, chosen by ``CheckSpec.tool``; and the entry points that use them.

``judge`` takes an already-parsed result; ``judge_output`` parses the captured text
first and turns a ParseError into a failing verdict (a garbled capture must never
pass); ``verdict_for_error`` records a check that could not run at all (timeout,
missing tool, lost connection) in the same shape so ``classify_run`` sees every check.
"""

from __future__ import annotations

from typing import Any

from validation.parsers import ParseError, Result, parse

from . import judges_health, judges_nvlink, judges_perf, judges_stress, judges_trust
from .judging import Findings, Judge
from .model import FAIL, CheckSpec, NodeContext, Verdict, one_line
from .thresholds import resolve_thresholds, validate_thresholds

JUDGES: dict[str, Judge] = {
    tool: j
    for j in (
        *judges_health.JUDGES,
        *judges_nvlink.JUDGES,
        *judges_stress.JUDGES,
        *judges_perf.JUDGES,
        *judges_trust.JUDGES,
    )
    for tool in j.tools
}


class ThresholdError(ValueError):
    """A check's thresholds are malformed or use keys its tool's judge does not know."""


def judge_for(tool: str) -> Judge:
    """The judge for ``tool``; the error lists the tools that have one."""
    try:
        return JUDGES[tool]
    except KeyError:
        raise ThresholdError(
            f"unknown tool {tool!r}; tools with a judge: {', '.join(sorted(JUDGES))}"
        ) from None


def effective_thresholds(
    spec: CheckSpec, gpu_model: str | None, fabric: str | None
) -> dict[str, Any]:
    """Resolved thresholds for one node, with each optional key's default filled in.

    An explicit ``null`` at the winning scope switches the rule off even when the judge
    has a default for it (e.g. ``"check_driver": {"fabric": {"lab": null}}``).
    """
    keys = judge_for(spec.tool).keys
    resolved = resolve_thresholds(spec.thresholds, gpu_model, fabric, keep_null=True)
    merged = {k: s.default for k, s in keys.items() if k not in resolved}
    merged.update(resolved)
    return {k: v for k, v in merged.items() if v is not None}


def judge(spec: CheckSpec, parsed_result: Result, context: NodeContext) -> Verdict:
    """Judge one parsed tool output for one node against the check's thresholds.

    Raises ThresholdError for a spec whose thresholds are malformed (a programming or
    profile error, found at load time for profiles) and TypeError when the result is
    not the tool's. A required threshold that has no value for this node's GPU model
    and fabric is a failing verdict: no floor must never mean "pass".
    """
    chosen = judge_for(spec.tool)
    problems = validate_thresholds(
        spec.thresholds, chosen.keys, spec.tool, f"check {spec.name!r} thresholds"
    )
    if problems:
        raise ThresholdError("; ".join(problems))
    if not isinstance(parsed_result, chosen.result_type):
        raise TypeError(
            f"check {spec.name!r} (tool {spec.tool!r}) got a {type(parsed_result).__name__}"
        )
    thresholds = effective_thresholds(spec, context.gpu_model, context.fabric)
    findings = Findings(spec, context, thresholds)
    missing = [k for k, s in chosen.keys.items() if s.required and k not in thresholds]
    if missing:
        findings.fail(
            f"no {', '.join(missing)} threshold for {context.gpu_model} on {context.fabric} "
            f"in check {spec.name!r}; refusing to judge without a floor"
        )
        return findings.verdict()
    chosen.func(parsed_result, thresholds, context, findings)
    return findings.verdict()


def verdict_for_error(spec: CheckSpec, reason: str, **metrics: Any) -> Verdict:
    """A failing, non-hardware verdict for a check that produced nothing judgeable."""
    return Verdict(
        status=FAIL,
        reason=f"{spec.name}: {reason}",
        metrics=dict(metrics),
        evidence=[reason],
        check=spec.name,
        required=spec.required,
    )


def judge_output(
    spec: CheckSpec,
    text: str,
    context: NodeContext,
    stderr: str = "",
    exit_code: int | None = None,
) -> Verdict:
    """Parse ``text`` as ``spec.tool`` output and judge it; unparseable output fails.

    When the tool also exited non-zero, its stderr joins the reason: that is where tools
    say why they stopped (gpu-burn's "Couldn't init a GPU test: ... invalid device
    ordinal"), and a technician should not have to open the stored stderr to learn it.
    """
    try:
        result = parse(spec.tool, text, command=spec.command)
    except ParseError as exc:
        verdict = verdict_for_error(spec, f"could not parse {spec.tool} output: {exc}")
        said = stderr_tail(stderr) if exit_code not in (0, None) else ""
        if said:
            verdict.reason = one_line(f"{verdict.reason} (exit {exit_code}; stderr: {said})")
            verdict.evidence.append(f"exit {exit_code}; stderr: {said}")
        return verdict
    return judge(spec, result, context)


def stderr_tail(stderr: str, lines: int = 3, limit: int = 160) -> str:
    """The last few non-blank lines of a tool's stderr on one line. The first of them is
    kept whole where it can be: tools print the cause, then that they gave up."""
    kept = [" ".join(line.split()) for line in stderr.splitlines() if line.strip()][-lines:]
    return one_line(" | ".join(kept), limit)
