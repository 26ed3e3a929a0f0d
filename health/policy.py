"""The policy: which row of the table decides an event, and what it decides.

`decide()` only reads; what the decision starts is `dispatch.act()`'s business. Rows are
tried by priority, lowest first, the first enabled row that matches wins; a watch row
counts the node's events it decided within its window and escalates when the count is
reached (this event included).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .choices import Decision
from .models import HealthEvent, HealthPolicy
from .models.policies import window_text


@dataclass(frozen=True)
class Verdict:
    decision: str
    rule: HealthPolicy | None
    note: str = ""  # "watching: 2 of 3 in 24 h", "escalated: 3 of 3 in 24 h"


def rules() -> list[HealthPolicy]:
    """The effective table: enabled rows in the order they are tried."""
    return list(HealthPolicy.objects.filter(enabled=True).order_by("priority", "id"))


def matches(rule: HealthPolicy, kind: str, code: str, klass: str, gpu_model: str) -> bool:
    if rule.kind != kind or rule.match.strip().lower() not in ("*", code, klass):
        return False
    return not rule.gpu_model or rule.gpu_model.lower() == (gpu_model or "").lower()


def first_match(
    table: list[HealthPolicy], kind: str, code: str, klass: str, gpu_model: str
) -> HealthPolicy | None:
    return next((r for r in table if matches(r, kind, code, klass, gpu_model)), None)


def decide(
    node_id: int,
    kind: str,
    code: str,
    klass: str,
    gpu_model: str,
    at: datetime,
    table: list[HealthPolicy],
) -> Verdict:
    rule = first_match(table, kind, code, klass, gpu_model)
    if rule is None:
        return Verdict(Decision.IGNORE, None, f"no policy row matches {kind} {code}")
    if rule.action != Decision.WATCH:
        return Verdict(rule.action, rule)
    assert rule.count and rule.window_minutes  # watch_problems() keeps watch rows whole
    window = timedelta(minutes=rule.window_minutes)
    earlier = HealthEvent.objects.filter(
        node_id=node_id, policy=rule, at__gt=at - window, at__lte=at
    ).count()
    seen = earlier + 1
    span = window_text(rule.window_minutes)
    if seen >= rule.count:
        return Verdict(rule.escalate_to, rule, f"escalated: {seen} of {rule.count} in {span}")
    return Verdict(Decision.WATCH, rule, f"watching: {seen} of {rule.count} in {span}")


def effective_rows() -> list[dict]:
    """The table as `manage.py health_policy` and docs/health.md show it."""
    return [
        {
            "priority": r.priority,
            "kind": r.kind,
            "match": r.match,
            "gpu_model": r.gpu_model or "*",
            "action": r.describe(),
            "note": r.note,
        }
        for r in rules()
    ]
