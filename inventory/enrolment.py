"""Enrolling new nodes: the rules a node must pass, written once for one node (the API,
the admin, the demo) and for ten thousand (the CSV import).

The rules come in two kinds, checked in two steps:

- `build()` checks a node on its own: its fields and the hostname pattern, the BMC settings
  through the driver's own schema (`BMC.clean()`), the MAC format, the labels. It runs no
  query, so an import can check every row of a large file outside its write transaction
  and report its progress while it does.
- `check_against_fleet()` checks what depends on other nodes: serial, hostname, MAC and IP
  uniqueness and the units a node takes in its rack, against the database and against the
  earlier nodes of the same batch. It runs a handful of queries for the whole batch, inside
  the transaction that has locked the batch's racks, so two enrolments cannot take the same
  unit.

`write()` then inserts the batch with bulk_create: a few statements per thousand nodes
instead of several per node.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Model
from django.dispatch import Signal

from .models import BMC, Label, NetworkInterface, Node, Rack, Site
from .validators import MAX_LABELS, TOO_MANY_LABELS

# Sent with `nodes=[...]` after write() inserted a batch: bulk_create sends no post_save, and
# the reports app opens each new node's first span from it, in the same transaction.
nodes_enrolled = Signal()

NODE_FIELDS = (
    "rack",
    "rack_unit",
    "u_height",
    "serial",
    "hostname",
    "model",
    "gpu_model",
    "gpu_count",
    "role",
    "fabric",
)
BMC_FIELDS = (
    "protocol",
    "address",
    "port",
    "username",
    "password",
    "verify_tls",
    "system_id",
    "gpu_system_id",
)
# Values in one `IN (...)` list: well below PostgreSQL's 65,535 bind parameters.
CHUNK = 5000
BATCH = 1000


class Errors:
    """Gathers validation errors from several objects, naming nested fields
    ("interfaces[0].mac") so a client can fix everything in one round trip."""

    def __init__(self) -> None:
        self.errors: dict[str, list] = {}

    def __bool__(self) -> bool:
        return bool(self.errors)

    def __contains__(self, name: str) -> bool:
        return name in self.errors

    def add(self, name: str, error: Any) -> None:
        self.errors.setdefault(name, []).append(error)

    @contextmanager
    def collect(self, prefix: str = "") -> Iterator[None]:
        try:
            yield
        except ValidationError as exc:
            if hasattr(exc, "error_dict"):
                items = list(exc.error_dict.items())
            else:
                items = [("__all__", exc.error_list)]
            for key, errs in items:
                # A whole-object error of a nested object is keyed by that object ("bmc").
                name = prefix.rstrip(".") if key == "__all__" and prefix else f"{prefix}{key}"
                self.errors.setdefault(name, []).extend(errs)

    def raise_any(self) -> None:
        if self.errors:
            raise ValidationError(self.errors)


@dataclass
class Enrolment:
    """One node to enrol, with its BMC, NICs and labels, and what is wrong with it."""

    node: Node
    bmc: BMC | None
    nics: list[NetworkInterface]
    labels: list[str]
    errors: Errors = field(default_factory=Errors)


def build(
    *,
    bmc: dict[str, Any] | None = None,
    interfaces: list[dict[str, Any]] | None = None,
    labels: list[str] | None = None,
    **fields: Any,
) -> Enrolment:
    """Build a node and check it on its own, without a query.

    Django's full_clean() would query for each unique field, each check constraint and the
    rack's existence; those checks are check_against_fleet()'s, one query per batch.
    """
    node = Node(**{k: v for k, v in fields.items() if k in NODE_FIELDS})
    errors = Errors()
    alone = {"validate_unique": False, "validate_constraints": False}
    with errors.collect():
        node.full_clean(exclude=["rack"], **alone)
    if node.rack_unit is not None and node.rack_id is None:
        errors.add("rack_unit", "A rack unit needs a rack.")
    b = BMC(**{k: v for k, v in (bmc or {}).items() if k in BMC_FIELDS}) if bmc else None
    if b is not None:
        with errors.collect("bmc."):
            b.full_clean(exclude=["node"], **alone)
    nics = [NetworkInterface(**iface) for iface in interfaces or []]
    for index, nic in enumerate(nics):
        with errors.collect(f"interfaces[{index}]."):
            nic.full_clean(exclude=["node"], **alone)
    names = [name.strip() for name in labels or [] if name.strip()]
    if len(names) > MAX_LABELS:
        errors.add("labels", TOO_MANY_LABELS)
        names = []
    for name in names:
        for message in _label_problems(name):
            errors.add("labels", message)
    return Enrolment(node, b, nics, names, errors)


@lru_cache(maxsize=1024)
def _label_problems(name: str) -> tuple[str, ...]:
    """What is wrong with a label name (an import repeats a few names thousands of times)."""
    try:
        Label(name=name).clean_fields()
    except ValidationError as exc:
        return tuple(f"'{name}': {m}" for m in exc.message_dict.get("name", exc.messages))
    return ()


def placement_problem(
    rack: Rack, rack_unit: int, u_height: int, occupants: Iterable[tuple[int, int, str]]
) -> str | None:
    """Why U`rack_unit` (`u_height` units) cannot go in `rack`, or None. `occupants` are
    the (first unit, last unit, hostname) already in the rack."""
    top = rack_unit + u_height - 1
    if rack_unit < 1 or top > rack.u_height:
        return f"U{rack_unit}-U{top} does not fit in rack {rack.name} (U1-U{rack.u_height})."
    clashes = [o for o in occupants if o[0] <= top and o[1] >= rack_unit]
    if not clashes:
        return None
    first, last, hostname = min(clashes)
    return f"U{rack_unit}-U{top} overlaps {hostname} at U{first}-U{last} in rack {rack.name}."


def lock_racks(batch: Sequence[Enrolment]) -> dict[int, Rack]:
    """Lock the batch's racks (in id order, so concurrent batches never deadlock) and name
    every node whose rack is gone."""
    ids = sorted({e.node.rack_id for e in batch if e.node.rack_id})
    racks = {r.pk: r for r in Rack.objects.select_for_update().filter(pk__in=ids).order_by("pk")}
    for e in batch:
        if e.node.rack_id and e.node.rack_id not in racks:
            e.errors.add("rack", f"Rack {e.node.rack_id} does not exist.")
    return racks


def _taken(model: type[Model], name: str, values: set) -> set:
    """The values of `name` that rows of `model` already hold."""
    found: set = set()
    ordered = sorted(values)
    for start in range(0, len(ordered), CHUNK):
        rows = model._default_manager.filter(**{f"{name}__in": ordered[start : start + CHUNK]})
        found.update(str(v) for v in rows.order_by().values_list(name, flat=True))
    return found


class _Unique:
    """One unique column: what the database holds plus what earlier nodes of the batch
    claimed. A field that failed its own checks is not looked up (as full_clean does)."""

    def __init__(self, model: type[Model], name: str, objs: Iterable[Model]) -> None:
        self.model, self.name = model, name
        values = {str(v) for obj in objs if (v := getattr(obj, name)) not in (None, "")}
        self.seen = _taken(model, name, values)

    def check(self, obj: Model, key: str, errors: Errors) -> str | None:
        value = getattr(obj, self.name)
        if value in (None, "") or key in errors:
            return None
        if str(value) in self.seen:
            errors.add(key, obj.unique_error_message(self.model, (self.name,)))
            return None
        return str(value)


def check_against_fleet(batch: Sequence[Enrolment]) -> None:
    """Add to each enrolment's errors what clashes with the fleet or an earlier, valid
    enrolment of the batch (as if the batch had been saved node by node). Call inside the
    transaction that will write the batch: it locks the racks."""
    racks = lock_racks(batch)
    sites = Site.objects.in_bulk({rack.site_id for rack in racks.values()})
    nodes = [e.node for e in batch]
    nics = [nic for e in batch for nic in e.nics]
    unique = {
        "serial": _Unique(Node, "serial", nodes),
        "hostname": _Unique(Node, "hostname", nodes),
        "mac": _Unique(NetworkInterface, "mac", nics),
        "ip": _Unique(NetworkInterface, "ip", nics),
    }
    occupants: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    placed = (
        Node.objects.filter(rack_id__in=racks, rack_unit__isnull=False)
        .order_by()
        .values_list("rack_id", "rack_unit", "u_height", "hostname")
    )
    for rack_id, unit, height, hostname in placed:
        if rack_id is not None and unit is not None:  # as filtered; said for the type checker
            occupants[rack_id].append((unit, unit + height - 1, hostname))
    for e in batch:
        claims = [
            (unique["serial"], unique["serial"].check(e.node, "serial", e.errors)),
            (unique["hostname"], unique["hostname"].check(e.node, "hostname", e.errors)),
        ]
        for index, nic in enumerate(e.nics):
            for name in ("mac", "ip"):
                key = f"interfaces[{index}].{name}"
                claims.append((unique[name], unique[name].check(nic, key, e.errors)))
        rack, unit = racks.get(e.node.rack_id or 0), e.node.rack_unit
        if rack is not None and unit is not None:
            problem = placement_problem(rack, unit, e.node.u_height, occupants[rack.pk])
            if problem:
                e.errors.add("rack_unit", problem)
        site = sites.get(rack.site_id) if rack is not None else None
        if e.bmc is not None and site is not None and site.bmc_networks:
            why = e.bmc.egress_problem(site)  # its site's BMC networks (build: the rest)
            if why and "bmc.address" not in e.errors:
                e.errors.add("bmc.address", BMC.EGRESS_REFUSED.format(why=why))
        if e.errors:
            continue
        # Valid: later nodes of the batch clash with it as with a saved node.
        for column, value in claims:
            if value is not None:
                column.seen.add(value)
        if rack is not None and unit is not None:
            occupants[rack.pk].append((unit, unit + e.node.u_height - 1, e.node.hostname))


def write(batch: Sequence[Enrolment]) -> list[Node]:
    """Insert checked enrolments: nodes, labels, BMCs and NICs, a statement per thousand."""
    nodes = Node.objects.bulk_create([e.node for e in batch], batch_size=BATCH)
    names = sorted({name for e in batch for name in e.labels})
    if names:
        Label.objects.bulk_create(
            [Label(name=name) for name in names], batch_size=BATCH, ignore_conflicts=True
        )
        label_ids = dict(Label.objects.filter(name__in=names).values_list("name", "pk"))
        through = Node.labels.through
        links = {(e.node.pk, label_ids[name]) for e in batch for name in e.labels}
        through.objects.bulk_create(
            [through(node_id=n, label_id=label) for n, label in sorted(links)], batch_size=BATCH
        )
    bmcs = []
    for e in batch:
        if e.bmc is not None:
            e.bmc.node = e.node
            bmcs.append(e.bmc)
    BMC.objects.bulk_create(bmcs, batch_size=BATCH)
    nics = []
    for e in batch:
        for nic in e.nics:
            nic.node = e.node
            nics.append(nic)
    NetworkInterface.objects.bulk_create(nics, batch_size=BATCH)
    nodes_enrolled.send(sender=Node, nodes=nodes)
    return nodes
