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
from typing import Any

from django.conf import settings

from inventory.choices import NodeState
from inventory.models import Rack, Site
from provisioning.models import ImageState

from . import baselines, forms, gates, imaging, rollout
from . import desired as d
from . import health as file_health
from . import images as file_images
from . import prune as pruning
from . import webhooks as file_webhooks
from .changes import (
    CHANGED,
    CREATE,
    DECOMMISSION,
    DELETE,
    GIVEN,
    STORED,
    UPDATE,
    Change,
    FieldChange,
    Plan,
    label_of,
)
from .loading import FleetFileError, Source, bulk
from .secrets import Secrets


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
    if any("image" in w.values for w in want.nodes.values()):
        for serial, image in imaging.current(nodes).items():
            node_forms[serial]["image"] = image
    known_baselines = baselines.existing()
    known_images = file_images.existing()
    image_forms = file_images.forms_of(known_images)
    known_profiles = gates.existing()
    subscriptions, shared = file_webhooks.existing() if want.webhooks else ({}, set())
    rules, shared_rules = file_health.existing()
    kinds: tuple[tuple[str, dict[Any, d.Wanted], dict[Any, Any], Any, Any], ...] = (
        ("site", want.sites, sites, forms.site_form, d.check_site),
        ("rack", want.racks, racks, forms.rack_form, d.check_rack),
        ("image", want.images, known_images, lambda i: image_forms[str(i)], file_images.check),
        ("gate_profile", want.gate_profiles, known_profiles, gates.form, gates.check),
        ("webhook", want.webhooks, subscriptions, file_webhooks.form, file_webhooks.check),
        ("health_rule", want.health_rules, rules, file_health.form, file_health.check),
        ("node", want.nodes, nodes, lambda node: node_forms[node.serial], d.check_node),
        ("baseline", want.baselines, known_baselines, baselines.form, baselines.check),
    )
    for kind, wanted, found, form, check in kinds:
        for key, w in wanted.items():
            if kind == "webhook" and key in shared:
                plan.refusals.append(file_webhooks.shared_refusal(key))
                continue
            if kind == "health_rule" and key in shared_rules:
                plan.refusals.append(file_health.shared_refusal(key))
                continue
            obj = found.get(key)
            current = form(obj) if obj is not None else None
            before.append([kind, current])
            change = _compare(kind, key, w, obj, current)
            if kind == "webhook":
                change = file_webhooks.with_secret(change, w, obj)
            if change is None:
                plan.unchanged += 1  # what it has passed these rules when it was written
            else:
                problems += check(w, current, obj)
                plan.changes.append(change)
    problems += _deprecated_targets(plan, known_images, want)
    if problems:
        raise FleetFileError(problems)
    if prune:
        pruning.fleet(plan, want, sites, racks, nodes, before, node_forms)
        if baselines.listed(sources):  # else the files do not manage baselines
            pruning.baseline_list(plan, want, known_baselines, before)
        if file_images.listed(sources):  # nor images
            pruning.image_list(plan, want, image_forms, before)
        if gates.listed(sources):  # nor gate profiles
            pruning.gate_profile_list(plan, want, known_profiles, before)
        if file_webhooks.listed(sources):  # nor webhooks
            pruning.webhook_list(plan, want, before)
        if file_health.listed(sources):  # nor the health policy
            pruning.health_list(plan, want, rules, shared_rules, before)
    plan.work = [
        *file_images.planned(plan.changes, known_images),
        *imaging.planned(plan, known_images, want.images),
        *rollout.planned(plan.changes, known_baselines),
    ]
    _judge(plan, nodes)
    plan.revision = _digest(before, plan)
    return plan


def _compare(
    kind: str, key: Any, w: d.Wanted, obj: Any, current: dict[str, Any] | None
) -> Change | None:
    label = label_of(kind, key, {**(current or {}), **w.values})
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


def _deprecated_targets(plan: Plan, known: dict[str, Any], want: d.Desired) -> list:
    """A node is not moved to an image that is, or that this apply makes, deprecated."""
    found = []
    for change in plan.changes:
        if change.kind != "node" or change.wanted is None:
            continue
        ref = change.wanted.values.get("image")
        if not ref or not any(f.name == "image" for f in change.fields):
            continue
        image = known.get(ref)
        given = want.images[ref].values["state"] if ref in want.images else None
        if ImageState.DEPRECATED in (given, getattr(image, "state", None)):
            message = f"image {ref} is deprecated: name a published image to move it to"
            found.append(change.wanted.item.problem(message, "image"))
    return found


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
