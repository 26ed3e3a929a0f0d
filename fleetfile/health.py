"""The health policy in the fleet files: which GPU and BMC events start what (docs/health.md),
one row per kind of event, code or class, and GPU model.

A row is keyed by what it matches: `kind`, `match` (a code such as 79, a class such as
uncorrectable, or `*`) and `gpu_model` (empty: any), written `xid 79 on H100-SXM`. Two rows
of the fleet matching the same thing but differing cannot be told apart by the files: the
plan refuses to manage that key until all but one are deleted; rows alike in everything
are the same rule twice, and change (or go) together. Each row is checked by
the model's own rules (a watch row needs its count, window and escalation; other rows none
of them). A prune deletes rows only when the files list them (a `health_policy:` key).
"""

from __future__ import annotations

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
    """The rows by key (the first of rows alike in everything: the same rule twice), and
    the keys of rows that differ but match the same thing."""
    found: dict[str, HealthPolicy] = {}
    shared = set()
    for row in HealthPolicy.objects.order_by("priority", "pk"):
        name = key(row.kind, row.match, row.gpu_model)
        first = found.setdefault(name, row)
        if first is not row and form(first) != form(row):
            shared.add(name)
    return {k: r for k, r in found.items() if k not in shared}, shared


def each_key() -> list[HealthPolicy]:
    """The first row of each key (an export names each key once; rows that differ under
    one key are then refused by the plan, saying so)."""
    found: dict[str, HealthPolicy] = {}
    for row in HealthPolicy.objects.order_by("priority", "pk"):
        found.setdefault(key(row.kind, row.match, row.gpu_model), row)
    return list(found.values())


def twins(row: HealthPolicy) -> list[HealthPolicy]:
    """The other rows alike `row` in everything: changed and deleted with it."""
    alike = HealthPolicy.objects.filter(kind=row.kind, match=row.match, gpu_model=row.gpu_model)
    return [r for r in alike.exclude(pk=row.pk) if form(r) == form(row)]


def form(row: HealthPolicy) -> dict[str, Any]:
    return {k: getattr(row, k) for k in KEYS}


def check(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    values = {**(current or {}), **wanted.values}
    try:
        HealthPolicy(**values).full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        return model_problems(wanted.item, exc)
    return []


def save(wanted: Wanted, row: HealthPolicy | None, actor: str = "") -> HealthPolicy:
    rows = [row, *twins(row)] if row is not None else [HealthPolicy()]
    for each in rows:
        for name, value in wanted.values.items():
            setattr(each, name, value)
        each.updated = timezone.now()
        each.full_clean()
        each.save()
    return rows[0]


def delete(row: HealthPolicy) -> None:
    for each in [row, *twins(row)]:
        each.delete()


def shared_refusal(found: str) -> str:
    return (
        f"health rule {found}: more than one row of the policy matches it, so the files "
        "cannot say which; delete all but one (/api/v1/health-policies/ or the Django admin)"
    )
