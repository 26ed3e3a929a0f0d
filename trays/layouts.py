"""Writes: a template from its slots, and a whole rack enrolled from one description.

A rack description names the template, the rack and, per slot filled, the tray's serial,
its BMC and optionally its hostname (else `<rack>-<slot>`). Credentials given once for
the rack (`bmc`) apply to every tray that does not give its own. Everything is checked
before anything is written, and the whole rack is one transaction: a description with
one tray wrong enrols nothing, and the 400 names every problem by its tray
(`trays[3].bmc.address`), as the node API does for one node.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from inventory import enrolment
from inventory.models import BMC, Rack, Site

from . import readiness
from .models import RackLayout, RackTemplate, Slot, Tray

SLOT_FIELDS = ("name", "role", "unit", "height", "within", "gpus")


# --- templates ---------------------------------------------------------------------------


def slot_problems(slots: list[dict[str, Any]], u_height: int) -> dict[str, list[str]]:
    """What is wrong with a template's slots, keyed `slots[i].field` (none: {})."""
    errors: dict[str, list[str]] = {}

    def add(index: int, name: str, message: str) -> None:
        errors.setdefault(f"slots[{index}].{name}", []).append(message)

    if not slots:
        return {"slots": ["A template has at least one slot."]}
    names = Counter(slot.get("name") for slot in slots)
    placed = {s["name"] for s in slots if s.get("unit") is not None and not s.get("within")}
    taken: list[tuple[int, int, str]] = []
    for index, slot in enumerate(slots):
        name, unit, within = slot.get("name"), slot.get("unit"), slot.get("within") or ""
        if names[name] > 1:
            add(index, "name", f"{name} is named twice; each slot has its own name.")
        if within:
            if unit is not None:
                add(index, "unit", f"{name} sits in {within}: it has no unit of its own.")
            if within not in placed:
                add(index, "within", f"{within} is not a slot with a unit in this template.")
            continue
        if unit is None:
            add(index, "unit", f"{name} needs a unit (or `within`, the slot it sits in).")
            continue
        top = unit + (slot.get("height") or 1) - 1
        if unit < 1 or top > u_height:
            add(index, "unit", f"U{unit}-U{top} does not fit in U1-U{u_height}.")
            continue
        clash = next((t for t in taken if t[0] <= top and t[1] >= unit), None)
        if clash is not None:
            add(index, "unit", f"U{unit}-U{top} overlaps {clash[2]} at U{clash[0]}-U{clash[1]}.")
        taken.append((unit, top, name))
    return errors


def create_template(
    *, name: str, slots: list[dict[str, Any]], actor: str, description: str = "", u_height: int = 48
) -> RackTemplate:
    """A new template with its slots, all or nothing."""
    problems = slot_problems(slots, u_height)
    if problems:
        raise ValidationError(problems)
    with transaction.atomic():
        template = RackTemplate(
            name=name, description=description, u_height=u_height, created_by=actor
        )
        template.full_clean()
        template.save()
        made = [Slot(template=template, **{k: s[k] for k in SLOT_FIELDS if k in s}) for s in slots]
        for index, slot in enumerate(made):
            try:
                slot.full_clean(exclude=["template"], validate_unique=False)
            except ValidationError as exc:
                raise ValidationError(
                    {f"slots[{index}].{k}": v for k, v in exc.message_dict.items()}
                ) from None
        Slot.objects.bulk_create(made)
    return template


# --- racks -------------------------------------------------------------------------------

_HOST_UNSAFE = re.compile(r"[^a-z0-9-]+")


def default_hostname(rack_name: str, slot_name: str) -> str:
    """`<rack>-<slot>` as a hostname: r12 + compute-03 -> r12-compute-03."""
    raw = _HOST_UNSAFE.sub("-", f"{rack_name}-{slot_name}".lower()).strip("-")
    return re.sub("-{2,}", "-", raw)[:63].rstrip("-")


def _rack(site: Site, name: str, u_height: int) -> Rack:
    """The rack to build: a new one, or an empty one already made (its delivery recorded
    before the trays were racked). Refused when it holds nodes or has a layout. Problems
    are keyed `rack_name`, the field the description gave."""
    rack = Rack.objects.select_for_update().filter(site=site, name=name).first()
    if rack is None:
        rack = Rack(site=site, name=name, u_height=u_height)
        try:
            rack.full_clean()
        except ValidationError as exc:
            raise ValidationError({"rack_name": exc.messages}) from None
        rack.save()
        return rack
    if RackLayout.objects.filter(rack=rack).exists():
        raise ValidationError({"rack_name": f"Rack {name} in {site.slug} is built already."})
    if rack.nodes.exists():
        raise ValidationError(
            {
                "rack_name": f"Rack {name} in {site.slug} holds nodes: enrol a template only "
                "into an empty rack."
            }
        )
    return rack


def enrol_rack(
    *,
    site: Site,
    rack: str,
    template: RackTemplate,
    trays: list[dict[str, Any]],
    bmc: dict[str, Any] | None = None,
) -> RackLayout:
    """Enrol every tray of a rack from its description, all or nothing."""
    slots = {s.name: s for s in template.slots.all()}
    errors = enrolment.Errors()
    seen_slots: dict[str, int] = {}
    seen_bmcs: dict[tuple[str, int | None], int] = {}
    for index, tray in enumerate(trays):
        name = tray.get("slot")
        if name not in slots:
            shown = ", ".join(sorted(slots)[:4])
            errors.add(
                f"trays[{index}].slot",
                f"{name} is not a slot of {template.name} ({len(slots)} slots: {shown}, ...).",
            )
        elif name in seen_slots:
            errors.add(
                f"trays[{index}].slot", f"{name} is filled by trays[{seen_slots[name]}] too."
            )
        else:
            seen_slots[name] = index
    with transaction.atomic():
        the_rack = _rack(site, rack, template.u_height)
        if the_rack.u_height < template.u_height:
            errors.add(
                "rack_name",
                f"{template.name} needs {template.u_height}U; {rack} has {the_rack.u_height}U.",
            )
        batch = []
        for index, tray in enumerate(trays):
            slot = slots.get(tray.get("slot", ""))
            given = {**(bmc or {}), **(tray.get("bmc") or {})}
            new = enrolment.build(
                rack=the_rack,
                rack_unit=slot.unit if slot else None,
                u_height=slot.height if slot else 1,
                role=slot.role if slot else "compute",
                gpu_count=tray.get("gpu_count", slot.gpus if slot else 0),
                gpu_model=tray.get("gpu_model", ""),
                model=tray.get("model", ""),
                serial=tray.get("serial", ""),
                hostname=tray.get("hostname") or default_hostname(rack, tray.get("slot", "")),
                bmc=given or None,
                labels=tray.get("labels"),
            )
            if new.bmc is None:
                new.errors.add(
                    "bmc",
                    "Each tray needs its BMC (address, and credentials here or once for the rack).",
                )
            else:
                where = (new.bmc.address.strip().lower(), new.bmc.port)
                if where in seen_bmcs:
                    new.errors.add(
                        "bmc.address",
                        f"{new.bmc.address} is trays[{seen_bmcs[where]}]'s "
                        "BMC too: each tray has its own.",
                    )
                seen_bmcs.setdefault(where, index)
            batch.append(new)
        enrolment.check_against_fleet(batch)
        _bmcs_in_use(batch)
        for index, new in enumerate(batch):
            for key, messages in new.errors.errors.items():
                for message in messages:
                    errors.add(f"trays[{index}].{key}", message)
        errors.raise_any()
        nodes = enrolment.write(batch)
        layout = RackLayout.objects.create(rack=the_rack, template=template)
        Tray.objects.bulk_create(
            [
                Tray(node=node, layout=layout, slot=slots[tray["slot"]])
                for node, tray in zip(nodes, trays, strict=True)
            ]
        )
        readiness.refresh(layout.pk)
    layout.refresh_from_db()
    return layout


def _bmcs_in_use(batch: list[enrolment.Enrolment]) -> None:
    """A BMC address another node holds already is refused: two nodes on one BMC would
    each be power-cycled for the other (the same address with another port is another
    BMC: a simulator, or a chassis manager's per-blade ports)."""
    given = [e.bmc.address.strip() for e in batch if e.bmc is not None]
    wanted = {*given, *(a.lower() for a in given)}
    if not wanted:
        return
    held: dict[tuple[str, int | None], str] = {}
    rows = BMC.objects.filter(address__in=wanted).values_list("address", "port", "node__hostname")
    for address, port, hostname in rows:
        held[(address.strip().lower(), port)] = hostname
    for e in batch:
        if e.bmc is None or "bmc.address" in e.errors:
            continue
        holder = held.get((e.bmc.address.strip().lower(), e.bmc.port))
        if holder:
            e.errors.add("bmc.address", f"{e.bmc.address} is the BMC of {holder} already.")
