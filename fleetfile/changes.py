"""A plan's parts: each object's change (field by field), the plan that holds them, and
what it prints (fleetfile/plan.py makes one; prune adds to it; apply writes it)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.urlsafe import redact_url

if TYPE_CHECKING:
    from . import desired as d

# What the files hold, in the order an apply writes it (a rack needs its site).
KINDS = (
    "site",
    "rack",
    "image",
    "gate_profile",
    "node",
    "baseline",
    "health_rule",
    "webhook",
)
CREATE, UPDATE, DELETE, DECOMMISSION = "create", "update", "delete", "decommission"
SIGNS = {CREATE: "+", UPDATE: "~", DELETE: "-", DECOMMISSION: "-"}
# What a plan shows for a password: never the value, not even a digest of it.
STORED, GIVEN, CHANGED = "(stored)", "(given)", "(changed)"


@dataclass
class FieldChange:
    name: str
    old: Any
    new: Any


@dataclass
class Change:
    kind: str  # site, rack, image, gate_profile, node, baseline
    key: Any
    action: str
    label: str
    fields: list[FieldChange] = field(default_factory=list)
    wanted: d.Wanted | None = field(default=None, repr=False)
    obj: Any = field(default=None, repr=False)

    def shown_key(self) -> str:
        if isinstance(self.key, tuple):
            return "/".join(self.key)
        return redact_url(self.key) if self.kind == "webhook" else str(self.key)

    def as_api(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.shown_key(),
            "action": self.action,
            "object": self.label,
            "where": self.wanted.where if self.wanted else None,
            "fields": [{"name": f.name, "old": f.old, "new": f.new} for f in self.fields],
        }


@dataclass
class Plan:
    changes: list[Change]
    unchanged: int
    revision: str = ""
    kept: list[str] = field(default_factory=list)  # what prune leaves, and why
    refusals: list[str] = field(default_factory=list)  # what stops an apply
    destructive: list[str] = field(default_factory=list)  # what needs --allow-destructive
    # What the apply starts: publishes, reimage and converge campaigns.
    work: list[Any] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)  # what a later apply will do, and why

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)

    def summary(self) -> dict[str, int]:
        found = {a: self.count(a) for a in (CREATE, UPDATE, DELETE, DECOMMISSION)}
        return {**found, "unchanged": self.unchanged}

    def as_api(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "summary": self.summary(),
            "changes": [c.as_api() for c in self.changes],
            "kept": self.kept,
            "refusals": self.refusals,
            "destructive": self.destructive,
            "work": [{**w.as_api(), "text": w.text()} for w in self.work],
            "waits": self.waits,
        }

    def text(self) -> str:
        """Readable by a person reviewing a change: one line per object, one per field."""
        lines = []
        for change in self.changes:
            where = f"  ({change.wanted.where})" if change.wanted else ""
            verb = f": {change.action}" if change.action == DECOMMISSION else ""
            lines.append(f"{SIGNS[change.action]} {change.label}{verb}{where}")
            for f in change.fields if change.action == UPDATE else []:
                lines.append(f"    {f.name}: {_shown(f.old)} -> {_shown(f.new)}")
        lines += [f"! kept: {why}" for why in self.kept]
        lines += [f"! refused: {why}" for why in self.refusals]
        lines += [f"! destructive: {why}" for why in self.destructive]
        lines += [f"> starts: {w.text()}" for w in self.work]
        lines += [f"> waits: {why}" for why in self.waits]
        s = self.summary()
        lines.append(
            f"Plan: {s[CREATE]} to create, {s[UPDATE]} to update, {s[DELETE]} to delete, "
            f"{s[DECOMMISSION]} to decommission, {s['unchanged']} unchanged. "
            f"Revision {self.revision}."
        )
        return "\n".join(lines)


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str) and value in (STORED, GIVEN, CHANGED):
        return value
    return json.dumps(value, ensure_ascii=False)


def label_of(kind: str, key: Any, values: dict[str, Any] | None) -> str:
    if kind == "rack":
        return f"rack {key[0]}/{key[1]}"
    if kind == "node":
        host = (values or {}).get("hostname")
        return f"node {key}" + (f" ({host})" if host else "")
    if kind == "health_rule":
        return f"health rule {key}"
    if kind == "webhook":
        return f"webhook {redact_url(key)}"  # a credential in it is not shown
    return f"{kind.replace('_', ' ')} {key}"
