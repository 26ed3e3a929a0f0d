"""Observed facts: what a node was seen running, from which source, when.

Every source (Redfish inspection and the periodic firmware re-read, phone-home, gate
outputs, in-band agents over the API) reports a nested dict; `flatten()` turns it into
rows keyed the same way whatever the source, so "driver" from nvidia-smi and "driver"
from a config-management run are one column of the drift matrix:

    {"kernel": "6.8.0", "firmware": {"BMC": "1.45"}, "gpus": [{"vbios": "96.00"}]}
    -> ("kernel", -1, "6.8.0"), ("firmware.BMC", -1, "1.45"), ("gpu.vbios", 0, "96.00")

Writers call `record()` inside their own transaction; it sends `facts_recorded` there, so
a listener (the drift app, which inventory never imports) updates what it derives in the
same commit: facts and drift are never seen out of step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from core import jsonsafe

from .models import Fact, Node
from .models.facts import NODE_LEVEL

# Sent inside the writer's transaction with node_ids=[...] and source="...".
facts_recorded = Signal()

KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/+ -]{0,99}\Z")
MAX_FACTS = 1000
MAX_GPUS = 64
MAX_VALUE = 255
Scalar = str | int | float | bool
Row = tuple[str, int, str]


class FactShapeError(ValueError):
    """A report that is not {key: scalar | {key: scalar} | [scalar] | gpus: [{...}]}."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def _scalar(value: Any) -> bool:
    return isinstance(value, Scalar)


def _text(path: str, value: Scalar) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value).strip()
    if len(text) > MAX_VALUE:
        raise FactShapeError(path, f"values are at most {MAX_VALUE} characters")
    return text


def _key(path: str, key: Any) -> str:
    if not isinstance(key, str) or not KEY.match(key):
        raise FactShapeError(
            path or str(key),
            "keys are 1-100 letters, digits and _ . : / + - or spaces, starting with a "
            "letter or digit",
        )
    return key


def _gpus(items: Any) -> list[Row]:
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise FactShapeError("gpus", "give a list of objects, one per GPU")
    if len(items) > MAX_GPUS:
        raise FactShapeError("gpus", f"at most {MAX_GPUS} GPUs")
    rows: list[Row] = []
    for position, item in enumerate(items):
        index = item.get("index", position)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < MAX_GPUS:
            raise FactShapeError(f"gpus[{position}].index", f"a GPU index 0-{MAX_GPUS - 1}")
        for name, value in item.items():
            if name == "index" or value is None:
                continue
            path = f"gpus[{position}].{_key(f'gpus[{position}]', name)}"
            if not _scalar(value):
                raise FactShapeError(path, "per-GPU values are strings or numbers")
            rows.append((f"gpu.{name}", index, _text(path, value)))
    return rows


def lenient(facts: Any) -> list[Row]:
    """Rows of a report from a source that must not be refused (phone-home, a gate run):
    each malformed entry is dropped, the rest kept."""
    if not isinstance(facts, dict):
        return []
    rows: list[Row] = []
    for key, value in facts.items():
        try:
            rows.extend(flatten({key: value}))
        except FactShapeError:
            continue
    return rows


def flatten(facts: Any) -> list[Row]:
    """Rows (key, gpu, value) of a report; a bad shape raises FactShapeError naming it.

    Shapes: a scalar; an object of scalars one level deep (`firmware: {"BMC": ..}` becomes
    `firmware.BMC`); a list of scalars (stored joined by ", "); and `gpus`, a list of
    objects one per GPU (`index` defaults to the position). None means "not reported".
    """
    if not isinstance(facts, dict):
        raise FactShapeError("facts", "give an object of key: value")
    rows: list[Row] = []
    for key, value in facts.items():
        key = _key("facts", key)
        if value is None:
            continue
        if key == "gpus":
            rows.extend(_gpus(value))
        elif _scalar(value):
            rows.append((key, NODE_LEVEL, _text(key, value)))
        elif isinstance(value, dict):
            for sub, item in value.items():
                path = f"{key}.{_key(key, sub)}"
                if item is None:
                    continue
                if not _scalar(item):
                    raise FactShapeError(path, "nested values are strings or numbers")
                rows.append((path, NODE_LEVEL, _text(path, item)))
        elif isinstance(value, list) and all(_scalar(i) for i in value):
            rows.append((key, NODE_LEVEL, _text(key, ", ".join(str(i) for i in value))))
        else:
            raise FactShapeError(key, "a string, number, list of those, or an object of those")
    if len(rows) > MAX_FACTS:
        raise FactShapeError("facts", f"at most {MAX_FACTS} values per report")
    return rows


def record(
    node: Node | int,
    source: str,
    facts: dict[str, Any] | Iterable[Row],
    *,
    at: datetime | None = None,
    replace_prefix: str | None = None,
) -> int:
    """Store a report's values as the node's latest; returns how many rows it wrote.

    `replace_prefix` drops the node's other values under that key prefix from the same
    source (a firmware re-read that no longer lists a component, a node that now has
    fewer GPUs), so a removed part does not linger as observed forever.
    """
    node_id = node if isinstance(node, int) else node.pk
    rows = flatten(facts) if isinstance(facts, dict) else list(facts)
    # What a BMC or a tool reported may hold a NUL or half a surrogate pair, which the
    # database cannot store: that value is kept with U+FFFD in its place, and the rest of
    # the report with it (the API refuses such a body first, naming the key; keys are
    # checked by flatten).
    rows = [(k, g, jsonsafe.clean(v)) for k, g, v in rows]
    now = at or timezone.now()
    with transaction.atomic():
        latest = {(k, g): v for k, g, v in rows}
        gone: list[int] = []
        if replace_prefix is not None:
            stale = Fact.objects.filter(
                node_id=node_id, source=source, key__startswith=replace_prefix
            ).values_list("pk", "key", "gpu")
            gone = [pk for pk, key, gpu in stale if (key, gpu) not in latest]
            if gone:
                Fact.objects.filter(pk__in=gone).delete()
        if not latest and not gone:
            return 0  # an empty report changes nothing: nobody needs to hear of it
        Fact.objects.bulk_create(
            [
                Fact(node_id=node_id, key=k, gpu=g, value=v, source=source, observed_at=now)
                for (k, g), v in latest.items()
            ],
            update_conflicts=True,
            unique_fields=["node", "key", "gpu"],
            update_fields=["value", "source", "observed_at"],
        )
        facts_recorded.send(sender=Fact, node_ids=[node_id], source=source)
    return len(latest)


def firmware_rows(firmware: list[dict[str, Any]]) -> list[Row]:
    """A Redfish/IPMI firmware inventory as `firmware.<Id>` rows (the member's Id is what a
    baseline names, or its stable `key` where the Id carries the version; Name when a BMC
    leaves Id out). Images that do not run (state not_installed) and unreadable versions
    give no row."""
    rows: list[Row] = []
    for item in firmware:
        name = str(item.get("key") or item.get("id") or item.get("name") or "").strip()
        version = item.get("version")
        if item.get("state", "installed") != "installed":
            continue  # a rollback, pending or backup image: not what runs (drift ignores it)
        if name and version not in (None, "") and KEY.match(name):
            rows.append((f"firmware.{name}", NODE_LEVEL, _text(name, version)))
    return rows


def hardware_rows(hardware: dict[str, Any]) -> list[Row]:
    """What inspection saw that a baseline may expect: BIOS, GPU count and per-GPU model,
    serial and VBIOS as the BMC reports them. Put these before firmware_rows() when
    recording both: a FirmwareInventory BIOS entry is the better source than the system's
    BiosVersion string (which some BMCs suffix with a build date)."""
    rows: list[Row] = []
    if hardware.get("bios_version"):
        rows.append(("firmware.BIOS", NODE_LEVEL, _text("bios", hardware["bios_version"])))
    gpus = hardware.get("gpus")
    if isinstance(gpus, list) and "gpus" not in (hardware.get("unavailable") or {}):
        rows.append(("gpu_count", NODE_LEVEL, str(len(gpus))))
        for index, gpu in enumerate(gpus):
            for field, key in (("model", "model"), ("serial", "serial")):
                if isinstance(gpu, dict) and gpu.get(field):
                    rows.append((f"gpu.{key}", index, _text(key, gpu[field])))
            if isinstance(gpu, dict) and gpu.get("firmware_version"):
                rows.append(("gpu.vbios", index, _text("vbios", gpu["firmware_version"])))
    return rows
