"""Apply: the plan written in one transaction, all of it or none (docs/fleet-as-code.md).

Every write goes through the services the API and the CSV import use (a node's BMC, its
NICs, its placement in the rack are checked there as everywhere), under the caller's name,
so the audit trail shows each object's change as the caller's. A problem found while
writing (a unit another node took, a hostname in use) is named at its file and line and
the whole apply is rolled back. Decommissions start as operations once the rest is
committed, as the decommission button would start them.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from django.utils.dateparse import parse_datetime

from core.actors import acting_as
from core.errors import DomainConflict
from inventory import enrolment, services
from inventory.models import NetworkInterface, Node, Rack, Site
from inventory.starting import start_action
from webhooks.services import delete_subscription

from . import baselines, gates, imaging, rollout
from . import desired as d
from . import health as file_health
from . import images as file_images
from . import plan as p
from . import webhooks as file_webhooks
from .changes import KINDS
from .loading import FleetFileError, Problem, Source, bulk, model_problems
from .models import FleetApply
from .secrets import Secrets

TAKEN_MEANWHILE = (
    "another change took one of these site or rack names, serials, hostnames, MACs or IPs "
    "while the apply ran; nothing was applied; plan again"
)


class StalePlan(DomainConflict):
    def __init__(self, given: str, current: str) -> None:
        self.given, self.current = given, current
        super().__init__(
            f"The fleet or the files changed since plan {given} (now {current}): plan again "
            "and review it."
        )

    def payload(self) -> dict[str, Any]:
        return {"detail": str(self), "revision": self.given, "current": self.current}


class ApplyRefused(DomainConflict):
    def __init__(self, plan: p.Plan, why: str) -> None:
        self.plan = plan
        super().__init__(why)

    def payload(self) -> dict[str, Any]:
        return {
            "detail": str(self),
            "refusals": self.plan.refusals,
            "destructive": self.plan.destructive,
        }


def apply(
    sources: list[Source],
    secrets: Secrets,
    *,
    actor: str,
    prune: bool = False,
    allow_destructive: bool = False,
    revision: str | None = None,
    commit: str = "",
    path: str = "",
) -> tuple[p.Plan, FleetApply | None]:
    """Plan again and write it; (the plan, the apply's record; None: nothing to change)."""
    with bulk(), transaction.atomic():
        # One apply at a time: the second waits here and plans what the first left.
        list(Site.objects.select_for_update().order_by("pk").values_list("pk", flat=True))
        plan = p.make(sources, secrets, prune=prune)
        if revision and revision != plan.revision:
            raise StalePlan(revision, plan.revision)
        if plan.refusals:
            raise ApplyRefused(plan, "The plan cannot be applied: " + "; ".join(plan.refusals))
        if plan.destructive and not allow_destructive:
            raise ApplyRefused(
                plan,
                "The plan deletes, decommissions or changes many in-service nodes: review it "
                "and apply with --allow-destructive (allow_destructive: true). "
                + "; ".join(plan.destructive[:5]),
            )
        if not plan.changes:
            return plan, None
        with acting_as(actor):
            try:
                with transaction.atomic():
                    _write(plan, actor)
                    started = imaging.start(_of(plan, imaging.Reimage), actor, plan.revision)
                    started += rollout.start(_of(plan, rollout.Work), actor, plan.revision)
            except IntegrityError:
                # Another writer took a name, serial, hostname, MAC or IP between the plan's
                # checks and the insert: the database's own words would name its tables.
                raise FleetFileError([Problem("", None, "", TAKEN_MEANWHILE)]) from None
        record = FleetApply.objects.create(
            actor=actor,
            revision=plan.revision,
            commit=commit[:64],
            path=path[:500],
            summary={**plan.summary(), **({"campaigns": started} if started else {})},
            changes=[c.as_api() for c in plan.changes],
        )
    return plan, record


def _of(plan: p.Plan, kind: type) -> list:
    return [w for w in plan.work if isinstance(w, kind)]


def _write(plan: p.Plan, actor: str) -> None:
    problems: list[Problem] = []
    changes = {kind: [c for c in plan.changes if c.kind == kind] for kind in KINDS}
    for change in changes["site"]:
        if change.action in (p.CREATE, p.UPDATE):
            problems += _save(change, change.obj or Site(), _site_fields(change))
    sites = {s.slug: s for s in Site.objects.all()}
    racks = {(r.site.slug, r.name): r for r in Rack.objects.select_related("site")}
    for change in changes["rack"]:
        if change.action in (p.CREATE, p.UPDATE):
            rack = change.obj or Rack(site=sites[change.key[0]])
            problems += _save(change, rack, _rack_fields(change))
            racks[change.key] = rack
    _raise(problems)
    problems += _saved(changes["image"], file_images.save, actor)
    problems += _saved(changes["gate_profile"], gates.save, actor)
    _raise(problems)
    batch: list[tuple[p.Change, enrolment.Enrolment]] = []
    for change in changes["node"]:
        if change.action == p.UPDATE:
            problems += _update_node(change, racks)
        elif change.action == p.CREATE:
            batch.append((change, _built(change, racks)))
    enrolment.check_against_fleet([e for _, e in batch])
    for change, e in batch:
        if e.errors:
            problems += _problems(change, ValidationError(e.errors.errors))
    _raise(problems)
    enrolment.write([e for _, e in batch])
    for change in changes["baseline"]:
        if change.wanted is not None:  # a create or an update (a delete is prune's)
            problems += baselines.save(change.wanted, change.obj, actor)
    problems += _saved(changes["health_rule"], file_health.save, actor)
    problems += _saved(changes["webhook"], file_webhooks.save, actor)
    _raise(problems)
    _remove(plan, actor, problems)
    _raise(problems)


def _saved(changes: list[p.Change], save: Any, actor: str) -> list[Problem]:
    """Each create or update (a prune's deletes are _remove's) through its kind's `save`
    (wanted, the object or None, actor) -> the object written."""
    problems: list[Problem] = []
    for change in changes:
        if change.wanted is None:
            continue
        try:
            change.obj = save(change.wanted, change.obj, actor)
        except ValidationError as exc:
            problems += _problems(change, exc)
        except DomainConflict as exc:  # an image published meanwhile: immutable now
            problems.append(Problem("", None, change.label, str(exc)))
    return problems


def _raise(problems: list[Problem]) -> None:
    if problems:
        raise FleetFileError(problems)


def _problems(change: p.Change, exc: ValidationError) -> list[Problem]:
    if change.wanted is None:
        return [Problem("", None, change.label, m) for m in exc.messages]
    renamed = {"rack_unit": ("unit",)}
    return model_problems(change.wanted.item, exc, renamed)


def _save(change: p.Change, obj: Any, fields: dict[str, Any]) -> list[Problem]:
    for name, value in fields.items():
        setattr(obj, name, value)
    try:
        obj.full_clean()
        obj.save()
    except ValidationError as exc:
        return _problems(change, exc)
    change.obj = obj
    return []


def _given(change: p.Change) -> dict[str, Any]:
    assert change.wanted is not None
    return change.wanted.values


def _site_fields(change: p.Change) -> dict[str, Any]:
    return dict(_given(change))


def _rack_fields(change: p.Change) -> dict[str, Any]:
    fields = {k: v for k, v in _given(change).items() if k != "site"}
    if fields.get("power_budget_kw") is not None:
        fields["power_budget_kw"] = Decimal(str(fields["power_budget_kw"]))
    if "delivered" in fields:
        fields["delivered"] = parse_datetime(fields["delivered"]) if fields["delivered"] else None
    return fields


def _node_fields(change: p.Change, racks: dict, creating: bool = False) -> dict[str, Any]:
    assert change.wanted is not None
    values = _given(change)
    fields: dict[str, Any] = {
        enrolment_name: values[key]
        for key, enrolment_name in (
            ("serial", "serial"),
            ("hostname", "hostname"),
            ("unit", "rack_unit"),
            ("u_height", "u_height"),
            ("model", "model"),
            ("gpu_model", "gpu_model"),
            ("gpu_count", "gpu_count"),
            ("role", "role"),
            ("fabric", "fabric"),
        )
        if key in values
    }
    if "rack" in values:
        fields["rack"] = racks[(values["site"], values["rack"])] if values["rack"] else None
    if "labels" in values:
        fields["labels"] = values["labels"]
    if "bmc" in values:
        bmc = {k: v for k, v in values["bmc"].items() if k != "password"}
        bmc["password"] = change.wanted.password or ""
        fields["bmc"] = bmc
    if creating and "interfaces" in values:
        fields["interfaces"] = [d.nic_fields(n) for n in values["interfaces"]]
    return fields


def _built(change: p.Change, racks: dict) -> enrolment.Enrolment:
    """The node as the plan built and checked it, placed in its rack (which may be one
    this apply just made); built again only if the plan kept none."""
    assert change.wanted is not None
    fields = _node_fields(change, racks, creating=True)
    built = change.wanted.built
    if built is None:
        return enrolment.build(**fields)
    built.node.rack = fields.get("rack")
    return built


def _update_node(change: p.Change, racks: dict) -> list[Problem]:
    node: Node = change.obj
    if all(f.name == "image" for f in change.fields):
        return []  # its image changes by the reimage campaign the apply starts
    fields = _node_fields(change, racks)
    if "rack" in fields and not any(f.name == "rack" for f in change.fields):
        del fields["rack"]  # the same place: no move to check
    try:
        with transaction.atomic():
            services.update_node(node, **fields)
            if "interfaces" in _given(change):
                _set_interfaces(node, _given(change)["interfaces"])
    except ValidationError as exc:
        return _problems(change, exc)
    return []


def _set_interfaces(node: Node, wanted: list[dict[str, Any]]) -> None:
    """The node's NICs become the file's: gone ones first, boot flags cleared before one is
    set, so the one-boot-NIC rule holds at every step."""
    current = {nic.mac: nic for nic in node.interfaces.all()}
    given = {nic["mac"]: nic for nic in wanted}
    for mac in current.keys() - given.keys():
        current[mac].delete()
    kept = [(current[mac], given[mac]) for mac in sorted(current.keys() & given.keys())]
    for nic, values in sorted(kept, key=lambda pair: bool(pair[1].get("boot"))):
        for name, value in d.nic_fields(values).items():
            setattr(nic, name, value)
        services.save_interface(nic)
    for mac in sorted(given.keys() - current.keys()):
        services.save_interface(NetworkInterface(node=node, **d.nic_fields(given[mac])))


# How a prune takes each kind out, where it is not a plain delete.
REMOVE: dict[str, Any] = {
    "node": lambda node, actor: services.delete_node(node),
    "baseline": baselines.delete,
    "image": file_images.remove,  # a published one is deprecated
    "webhook": delete_subscription,
    "health_rule": lambda row, actor: file_health.delete(row),
}


def _remove(plan: p.Plan, actor: str, problems: list[Problem]) -> None:
    """Prune's part: nodes, then racks, then sites (each needs the ones before gone)."""
    reason = f"not in the fleet files (apply of plan {plan.revision}, pruning)"
    kinds = ("node", "rack", "site", "baseline", "image", "gate_profile", "webhook", "health_rule")
    for kind in kinds:
        for change in plan.changes:
            pruned_image = kind == "image" and change.wanted is None  # deprecated: an update
            if change.kind != kind or not (
                change.action in (p.DELETE, p.DECOMMISSION) or pruned_image
            ):
                continue
            try:
                if change.action == p.DECOMMISSION:
                    start_action(change.obj, "decommission", actor, reason=reason)
                elif kind in REMOVE:
                    REMOVE[kind](change.obj, actor)
                else:
                    change.obj.delete()
            except (DomainConflict, ProtectedError, ValidationError) as exc:
                problems.append(Problem("", None, change.label, f"cannot {change.action}: {exc}"))
