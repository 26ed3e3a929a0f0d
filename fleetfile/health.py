"""The health policy in the fleet files: which GPU and BMC events start what (docs/health.md),
one row per kind of event, code or class, and GPU model.

A row is keyed by what it matches: `kind`, `match` (a code such as 79, a class such as
uncorrectable, or `*`) and `gpu_model` (empty: any), written `xid 79 on H100-SXM`. Two rows
of the fleet matching the same thing cannot be told apart by the files: the plan refuses
to manage that key until one is deleted. Each row is checked by
the model's own rules (a watch row needs its count, window and escalation; other rows none
of them). A prune deletes rows only when the files list them (a `health_policy:` key).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from health.models import HealthPolicy

from .loading import Item, Problem, Source, model_problems

if TYPE_CHECKING:
    from .desired import Wanted

KEYS = (
    "kind",
    "match",
    "gpu_model",
    "action",
    "count",
    "window_minutes",
    "escalate_to",
    "priority",
    "enabled",
    "note",
)


def key(kind: str, match: Any, gpu_model: str | None) -> str:
    """`xid 79 on H100-SXM`, `ecc uncorrectable` (any GPU model)."""
    on = f" on {gpu_model}" if gpu_model else ""
    return f"{kind} {canonical_match(match)}{on}"


def canonical_match(match: Any) -> str:
    """As the API stores it: a code (79 in YAML is a number) or class, lower case."""
    return str("*" if match is None else match).strip().lower()


def listed(sources: list[Source]) -> bool:
    """Whether any file lists the health policy (then a prune manages all of it)."""
    return any(isinstance(s.data, dict) and "health_policy" in s.data for s in sources)


def wanted_values(item: Item) -> dict[str, Any]:
    values = {k: item.data[k] for k in KEYS if k in item.data}
    values["match"] = canonical_match(values.get("match"))
    values.setdefault("gpu_model", "")
    return values


def existing() -> tuple[dict[str, HealthPolicy], set[str]]:
    """The rows by key, and the keys more than one row has."""
    rows = list(HealthPolicy.objects.order_by("priority", "pk"))
    counts = Counter(key(r.kind, r.match, r.gpu_model) for r in rows)
    shared = {k for k, n in counts.items() if n > 1}
    return {k: r for r in rows if (k := key(r.kind, r.match, r.gpu_model)) not in shared}, shared


def form(row: HealthPolicy) -> dict[str, Any]:
    return {k: getattr(row, k) for k in KEYS}


def check(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    values = {**(current or {}), **wanted.values}
    try:
        HealthPolicy(**values).full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        return model_problems(wanted.item, exc)
    return []


def save(wanted: Wanted, row: HealthPolicy | None) -> HealthPolicy:
    row = row or HealthPolicy()
    for name, value in wanted.values.items():
        setattr(row, name, value)
    row.updated = timezone.now()
    row.full_clean()
    row.save()
    return row


def shared_refusal(found: str) -> str:
    return (
        f"health rule {found}: more than one row of the policy matches it, so the files "
        "cannot say which; delete all but one (/api/v1/health-policies/ or the Django admin)"
    )
