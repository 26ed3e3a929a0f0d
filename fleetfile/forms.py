"""Objects in the fleet file's own form, for both sides of a plan and for export.

Every value is put in one canonical form before it is compared, so a file that says the
same thing in other words (a MAC in upper case, `120` for `120.00` kW, a date for its
midnight in UTC, a network not in canonical form) plans as no change.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, time
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from django.utils.dateparse import parse_date, parse_datetime

from core.egress import clean_networks
from inventory.models import NetworkInterface, Node, Rack, Site
from inventory.validators import normalise_mac

BMC_KEYS = ("protocol", "address", "port", "username", "verify_tls", "system_id", "gpu_system_id")
NIC_KEYS = ("mac", "name", "ip", "boot", "fabric_rail")
# File keys that are not the model field's name.
NODE_FIELD = {"unit": "rack_unit"}


class Unreadable(ValueError):
    """A value the file gives that cannot be put in canonical form (its message says why)."""


def kilowatts(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(Decimal(str(value)).quantize(Decimal("0.01")))
    except InvalidOperation as exc:
        raise Unreadable(f"{value!r} is not a number of kW") from exc


def moment(value: Any) -> str | None:
    """A date (its midnight, UTC) or an ISO 8601 time, as ISO 8601 in UTC."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        found: datetime | None = value
    else:
        text = str(value)
        found = parse_datetime(text)
        if found is None and (day := parse_date(text)) is not None:
            found = datetime.combine(day, time(), tzinfo=UTC)
    if found is None:
        raise Unreadable(f"{value!r} is not a date (2026-09-01) or an ISO 8601 time")
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    return found.astimezone(UTC).isoformat()


@lru_cache(maxsize=65536)  # a plan canonicalises each MAC of a file several times
def mac(value: str) -> str:
    try:
        return normalise_mac(value)
    except ValueError as exc:
        raise Unreadable(
            f"{value!r} is not a MAC address; use six hex pairs such as 52:54:00:ab:cd:ef"
        ) from exc


def networks(value: list) -> list[str]:
    from django.core.exceptions import ValidationError

    try:
        return clean_networks(value)
    except ValidationError as exc:
        raise Unreadable("; ".join(exc.messages)) from exc


def site_form(site: Site) -> dict[str, Any]:
    return {
        "slug": site.slug,
        "name": site.name,
        "description": site.description,
        "attestation": site.attestation,
        "bmc_networks": list(site.bmc_networks or []),
        "rack_max_out_percent": site.rack_max_out_percent,
        "rack_min_out": site.rack_min_out,
        "site_max_out_percent": site.site_max_out_percent,
        "site_min_out": site.site_min_out,
    }


def rack_form(rack: Rack) -> dict[str, Any]:
    return {
        "site": rack.site.slug,
        "name": rack.name,
        "row": rack.row,
        "position": rack.position,
        "u_height": rack.u_height,
        "power_budget_kw": kilowatts(rack.power_budget_kw),
        "fabric": rack.fabric,
        "delivered": moment(rack.delivered),
        "leaf_switches": list(rack.leaf_switches or []),
    }


def nic_form(nic: Any) -> dict[str, Any]:
    return {
        "mac": nic.mac,
        "name": nic.name,
        "ip": nic.ip,
        "boot": nic.boot,
        "fabric_rail": nic.fabric_rail,
    }


def node_form(node: Node) -> dict[str, Any]:
    """A node as a file gives it (its BMC's password is never in it)."""
    labels = [label.name for label in node.labels.all()]
    return _form(node, labels, [nic_form(n) for n in node.interfaces.all()])


def _form(node: Node, labels: list[str], nics: list[dict[str, Any]]) -> dict[str, Any]:
    rack = node.rack
    found: dict[str, Any] = {
        "serial": node.serial,
        "hostname": node.hostname,
        "site": rack.site.slug if rack is not None else None,
        "rack": rack.name if rack is not None else None,
        "unit": node.rack_unit,
        "u_height": node.u_height,
        "model": node.model,
        "gpu_model": node.gpu_model,
        "gpu_count": node.gpu_count,
        "role": node.role,
        "fabric": node.fabric,
        "labels": sorted(labels),
        "interfaces": sorted(nics, key=_by_mac),
    }
    bmc = getattr(node, "bmc", None)
    if bmc is not None:
        found["bmc"] = {key: getattr(bmc, key) for key in BMC_KEYS}
    return found


def _by_mac(nic: dict[str, Any]) -> str:
    return str(nic["mac"])


def wanted_site(data: dict[str, Any]) -> dict[str, Any]:
    found = dict(data)
    if "bmc_networks" in found:
        found["bmc_networks"] = networks(found["bmc_networks"])
    return found


def wanted_rack(data: dict[str, Any]) -> dict[str, Any]:
    found = dict(data)
    if "power_budget_kw" in found:
        found["power_budget_kw"] = kilowatts(found["power_budget_kw"])
    if "delivered" in found:
        found["delivered"] = moment(found["delivered"])
    return found


def wanted_node(data: dict[str, Any]) -> dict[str, Any]:
    """The file's node in canonical form; `bmc.password` stays the reference it is."""
    found = dict(data)
    if "labels" in found:
        found["labels"] = sorted({name.strip() for name in found["labels"] if name.strip()})
    if "interfaces" in found:
        nics = []
        for nic in found["interfaces"]:
            nic = {"name": "", "ip": None, "boot": False, "fabric_rail": None, **nic}
            nic["mac"] = mac(nic["mac"])
            nics.append(nic)
        found["interfaces"] = sorted(nics, key=_by_mac)
    return found


def few(count: int) -> bool:
    """Whether `count` nodes are few enough to read by IN lists of ids. A file usually
    names most of the fleet: then all of it is read in plain queries instead (building an
    IN list costs Django about 0.1 ms an id: seconds for a site)."""
    return count * 4 < Node.objects.count()


def nodes_by_serial(serials: Iterable[str] | None) -> dict[str, Node]:
    """The nodes with these serials (None: every node), with their rack, site and BMC."""
    query = Node.objects.select_related("rack__site", "bmc").order_by("serial")
    wanted = None if serials is None else set(serials)
    if wanted is not None and few(len(wanted)):
        found: dict[str, Node] = {}
        ordered = sorted(wanted)
        for start in range(0, len(ordered), 5000):
            found.update(
                (n.serial, n) for n in query.filter(serial__in=ordered[start : start + 5000])
            )
        return dict(sorted(found.items()))
    return {n.serial: n for n in query if wanted is None or n.serial in wanted}


def node_forms(nodes: dict[str, Node]) -> dict[str, dict[str, Any]]:
    """node_form of each of `nodes` (by serial), their NICs and labels read at once."""
    ids = {node.pk for node in nodes.values()}
    nic_rows = NetworkInterface.objects.order_by("mac")
    link_rows = Node.labels.through.objects.values_list("node_id", "label__name")
    if few(len(ids)):
        nic_rows = nic_rows.filter(node_id__in=ids)
        link_rows = link_rows.filter(node_id__in=ids)
    nics: dict[int, list[dict[str, Any]]] = {pk: [] for pk in ids}
    for nic in nic_rows:
        if nic.node_id in nics:
            nics[nic.node_id].append(nic_form(nic))
    labels: dict[int, list[str]] = {pk: [] for pk in ids}
    for node_id, name in link_rows:
        if node_id in labels:
            labels[node_id].append(name)
    return {serial: _form(node, labels[node.pk], nics[node.pk]) for serial, node in nodes.items()}
