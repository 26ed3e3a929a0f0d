"""Plan: what applying the files would change, object by object and field by field, and
the fleet's revision it was made against (docs/fleet-as-code.md).

Only what the files name is compared, and of each object only the keys given: a key left
out is left as it is. With `prune`, objects of the fleet the files do not name are deleted
(a node with history is decommissioned instead, as the API does; one already
decommissioned is gone from the fleet and left alone). The revision is a digest of what
the plan read and what it would change, so an apply of a plan made before the fleet or the
files changed is refused, as Terraform refuses a stale plan.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from inventory.choices import NodeState
from inventory.models import Rack, Site
from inventory.services import deletable

from . import baselines, forms, rollout
from . import desired as d
from .loading import FleetFileError, Source, bulk
from .secrets import Secrets

CREATE, UPDATE, DELETE, DECOMMISSION = "create", "update", "delete", "decommission"
SIGNS = {CREATE: "+", UPDATE: "~", DELETE: "-", DECOMMISSION: "-"}
# What a plan shows for a password: never the value, not even a digest of it.
STORED, GIVEN, CHANGED = "(stored)", "(given)", "(changed)"
DECOMMISSION_FROM = (
    NodeState.ENROLLED,
    NodeState.READY,
    NodeState.DRAINED,
    NodeState.FAILED,
    NodeState.RMA,
)


@dataclass
class FieldChange:
    name: str
    old: Any
    new: Any


@dataclass
class Change:
    kind: str  # site, rack, node, baseline
    key: Any
    action: str
    label: str
    fields: list[FieldChange] = field(default_factory=list)
    wanted: d.Wanted | None = field(default=None, repr=False)
    obj: Any = field(default=None, repr=False)

    def as_api(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": "/".join(self.key) if isinstance(self.key, tuple) else self.key,
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
    work: list[rollout.Work] = field(default_factory=list)  # campaigns the apply starts

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
            "work": [w.as_api() for w in self.work],
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


def make(sources: list[Source], secrets: Secrets, prune: bool = False) -> Plan:
    """The plan of `sources`; FleetFileError naming every problem in them."""
    with bulk():
        return _make(sources, secrets, prune)


def _make(sources: list[Source], secrets: Secrets, prune: bool) -> Plan:
    want = d.collect(sources, secrets)
    sites = {s.slug: s for s in Site.objects.all()}
    racks = {(r.site.slug, r.name): r for r in Rack.objects.select_related("site")}
    nodes = forms.nodes_by_serial(None if prune else want.nodes)
    plan = Plan(changes=[], unchanged=0)
    before: list[Any] = []
    problems = list(want.problems)
    node_forms = forms.node_forms(nodes)
    known_baselines = baselines.existing()
    kinds: tuple[tuple[str, dict[Any, d.Wanted], dict[Any, Any], Any, Any], ...] = (
        ("site", want.sites, sites, forms.site_form, d.check_site),
        ("rack", want.racks, racks, forms.rack_form, d.check_rack),
        ("node", want.nodes, nodes, lambda node: node_forms[node.serial], d.check_node),
        ("baseline", want.baselines, known_baselines, baselines.form, baselines.check),
    )
    for kind, wanted, found, form, check in kinds:
        for key, w in wanted.items():
            obj = found.get(key)
            current = form(obj) if obj is not None else None
            before.append([kind, current])
            change = _compare(kind, key, w, obj, current)
            if change is None:
                plan.unchanged += 1  # what it has passed these rules when it was written
            else:
                problems += check(w, current, obj)
                plan.changes.append(change)
    if problems:
        raise FleetFileError(problems)
    if prune:
        _prune(plan, want, sites, racks, nodes, before, node_forms)
        if baselines.listed(sources):  # else the files do not manage baselines
            _prune_baselines(plan, want, known_baselines, before)
    plan.work = rollout.planned(plan.changes, known_baselines)
    _judge(plan, nodes)
    plan.revision = _digest(before, plan)
    return plan


def _label(kind: str, key: Any, values: dict[str, Any] | None) -> str:
    if kind == "rack":
        return f"rack {key[0]}/{key[1]}"
    if kind == "node":
        host = (values or {}).get("hostname")
        return f"node {key}" + (f" ({host})" if host else "")
    return f"{kind} {key}"


def _compare(
    kind: str, key: Any, w: d.Wanted, obj: Any, current: dict[str, Any] | None
) -> Change | None:
    label = _label(kind, key, {**(current or {}), **w.values})
    if current is None:
        fields = [FieldChange(k, None, v) for k, v in w.values.items() if k != "bmc"]
        if "bmc" in w.values:
            bmc = {k: v for k, v in w.values["bmc"].items() if k != "password"}
            fields.append(FieldChange("bmc", None, bmc))
            if w.password:
                fields.append(FieldChange("bmc.password", None, GIVEN))
        return Change(kind, key, CREATE, label, fields, w, None)
    fields = []
    for name, new in w.values.items():
        if name == "bmc":
            fields += _bmc_fields(current.get("bmc"), new, w.password, obj)
        elif name == "interfaces":
            fields += _nic_fields(current["interfaces"], new)
        elif name == "components":  # a baseline's, one line per component changed
            old = current.get(name) or {}
            fields += [
                FieldChange(f"components.{c}", old.get(c), new.get(c))
                for c in sorted(old.keys() | new.keys())
                if old.get(c) != new.get(c)
            ]
        elif name == "site" and kind == "node":
            continue  # compared with its rack, as one place
        elif name == "rack" and kind == "node":
            old_place = _place(current.get("site"), current.get("rack"))
            new_place = _place(w.values.get("site"), new)
            if old_place != new_place:
                fields.append(FieldChange("rack", old_place, new_place))
        elif current.get(name) != new:
            fields.append(FieldChange(name, current.get(name), new))
    if not fields:
        return None
    return Change(kind, key, UPDATE, label, fields, w, obj)


def _place(site: str | None, rack: str | None) -> str | None:
    return f"{site}/{rack}" if rack is not None else None


def _bmc_fields(old: dict | None, new: dict, password: str | None, node: Any) -> list:
    given = {k: v for k, v in new.items() if k != "password"}
    if old is None:
        found = [FieldChange("bmc", None, given)]
        return found + ([FieldChange("bmc.password", None, GIVEN)] if password else [])
    found = [FieldChange(f"bmc.{k}", old.get(k), v) for k, v in given.items() if old.get(k) != v]
    if password:
        stored = node.bmc.password
        if stored != password:
            found.append(FieldChange("bmc.password", STORED if stored else None, CHANGED))
    return found


def _nic_fields(old: list[dict], new: list[dict]) -> list[FieldChange]:
    before = {n["mac"]: n for n in old}
    after = {n["mac"]: n for n in new}
    found = []
    for mac in sorted(before.keys() | after.keys()):
        if before.get(mac) != after.get(mac):
            found.append(FieldChange(f"interfaces[{mac}]", before.get(mac), after.get(mac)))
    return found


def _prune(
    plan: Plan,
    want: d.Desired,
    sites: dict[str, Site],
    racks: dict[tuple[str, str], Rack],
    nodes: dict[str, Any],
    before: list,
    node_forms: dict[str, dict[str, Any]],
) -> None:
    leaving: set[int] = set()
    for serial, node in nodes.items():
        if serial in want.nodes or node.state == NodeState.DECOMMISSIONED:
            continue
        before.append(["node", node_forms[serial]])
        label = _label("node", serial, {"hostname": node.hostname})
        if deletable(node) is None:
            plan.changes.append(Change("node", serial, DELETE, label, obj=node))
            leaving.add(node.pk)
        elif node.state in DECOMMISSION_FROM:
            plan.changes.append(Change("node", serial, DECOMMISSION, label, obj=node))
        else:
            plan.refusals.append(
                f"{node.hostname} is {node.state}: drain it before prune decommissions it"
            )
    holding = _held(leaving)
    gone_racks: set[int] = set()
    for key, rack in racks.items():
        if key in want.racks:
            continue
        if holding.get(rack.pk):
            plan.kept.append(f"rack {key[0]}/{key[1]} still holds {holding[rack.pk]}")
            continue
        before.append(["rack", forms.rack_form(rack)])
        plan.changes.append(Change("rack", key, DELETE, _label("rack", key, None), obj=rack))
        gone_racks.add(rack.pk)
    for slug, site in sites.items():
        if slug in want.sites:
            continue
        left = [
            f"{k[0]}/{k[1]}" for k, r in racks.items() if k[0] == slug and r.pk not in gone_racks
        ]
        if left:
            plan.kept.append(f"site {slug} still holds rack {', '.join(sorted(left)[:3])}")
            continue
        before.append(["site", forms.site_form(site)])
        plan.changes.append(Change("site", slug, DELETE, _label("site", slug, None), obj=site))


def _prune_baselines(plan: Plan, want: d.Desired, known: dict[str, Any], before: list) -> None:
    for name, baseline in known.items():
        if name not in want.baselines:
            before.append(["baseline", baselines.form(baseline)])
            label = _label("baseline", name, None)
            plan.changes.append(Change("baseline", name, DELETE, label, obj=baseline))


def _held(leaving: set[int]) -> dict[int, str]:
    """Per rack, the nodes that stay in it after the prune (decommissioned ones included:
    their history keeps them), as a few hostnames."""
    from inventory.models import Node

    found: dict[int, list[str]] = {}
    for rack_id, hostname in (
        Node.objects.filter(rack__isnull=False)
        .exclude(pk__in=leaving)
        .values_list("rack_id", "hostname")
        .order_by("hostname")
    ):
        found.setdefault(rack_id, []).append(hostname)
    return {k: ", ".join(v[:3]) + (", ..." if len(v) > 3 else "") for k, v in found.items()}


def _judge(plan: Plan, nodes: dict) -> None:
    """What makes the apply destructive: every delete or decommission, and changes to more
    in-service nodes than CORRAL_FLEET_IN_SERVICE_CHANGES (labels aside)."""
    for change in plan.changes:
        if change.action in (DELETE, DECOMMISSION):
            plan.destructive.append(f"{change.action} {change.label}")
    busy = {
        c.obj.pk: c.label
        for c in plan.changes
        if c.kind == "node"
        and c.action == UPDATE
        and c.obj.state == NodeState.IN_SERVICE
        and any(f.name != "labels" for f in c.fields)
    }
    for w in plan.work:  # a converge drains them; a node changed and converged counts once
        for pk, hostname in w.in_service:
            busy.setdefault(pk, hostname)
    limit = settings.CORRAL_FLEET_IN_SERVICE_CHANGES
    if len(busy) > limit:
        plan.destructive.append(
            f"{len(busy)} in-service nodes change (more than {limit}): "
            + ", ".join(list(busy.values())[:3])
        )


def _digest(before: list, plan: Plan) -> str:
    body = json.dumps(
        {
            "before": before,
            "changes": [c.as_api() for c in plan.changes],
            "work": [w.nodes for w in plan.work],
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]
