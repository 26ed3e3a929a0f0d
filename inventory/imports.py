"""Bulk enrolment from CSV: one transaction, every bad row reported, nothing half-imported."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import IO

from django.core.exceptions import ValidationError
from django.db import transaction

from . import services
from .models import Rack, Site

COLUMNS = (
    "site",
    "rack",
    "rack_unit",
    "serial",
    "hostname",
    "model",
    "gpu_model",
    "gpu_count",
    "bmc_protocol",
    "bmc_address",
    "bmc_username",
    "bmc_password",
    "boot_mac",
)
OPTIONAL = ("u_height", "role", "boot_ip", "labels")


@dataclass
class RowError:
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


@dataclass
class ImportReport:
    created: int = 0
    errors: list[RowError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError({name: f"'{value}' is not a whole number."})


def _row_to_kwargs(row: dict[str, str], racks: dict[tuple[str, str], Rack]) -> dict:
    site, rack_name = row["site"].strip(), row["rack"].strip()
    rack = racks.get((site, rack_name))
    if rack is None:
        known = Site.objects.filter(slug=site).exists() or Site.objects.filter(name=site).exists()
        where = f"site '{site}'" if known else f"an unknown site '{site}'"
        raise ValidationError(
            {
                "rack": f"rack '{rack_name}' does not exist in {where}; "
                "create the site and rack first."
            }
        )
    kwargs: dict = {
        "rack": rack,
        "rack_unit": _int(row["rack_unit"], "rack_unit"),
        "serial": row["serial"].strip(),
        "hostname": row["hostname"].strip(),
        "model": row["model"].strip(),
        "gpu_model": row["gpu_model"].strip(),
        "gpu_count": _int(row["gpu_count"] or "0", "gpu_count"),
        "bmc": {
            "protocol": row["bmc_protocol"].strip().lower(),
            "address": row["bmc_address"].strip(),
            "username": row["bmc_username"].strip(),
            "password": row["bmc_password"],
        },
        "interfaces": [],
    }
    if row.get("u_height"):
        kwargs["u_height"] = _int(row["u_height"], "u_height")
    if row.get("role"):
        kwargs["role"] = row["role"].strip()
    if row.get("labels"):
        kwargs["labels"] = row["labels"].replace(";", " ").split()
    if row["boot_mac"].strip():
        nic = {"mac": row["boot_mac"].strip(), "boot": True}
        if row.get("boot_ip"):
            nic["ip"] = row["boot_ip"].strip()
        kwargs["interfaces"].append(nic)
    return kwargs


def _errors_of(exc: ValidationError, line: int) -> list[RowError]:
    if hasattr(exc, "error_dict"):
        return [
            RowError(line, name.replace("interfaces[0].", "boot_").replace("bmc.", "bmc_"), msg)
            for name, errs in exc.message_dict.items()
            for msg in errs
        ]
    return [RowError(line, "row", msg) for msg in exc.messages]


def import_nodes(source: IO, actor: str = "system") -> ImportReport:
    """Import every row or none. `source` is a binary or text file object."""
    raw = source.read()
    text = raw.decode("utf-8-sig", errors="replace") if isinstance(raw, bytes) else raw
    reader = csv.DictReader(io.StringIO(text))
    report = ImportReport()
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        report.errors.append(RowError(1, "header", f"missing columns: {', '.join(missing)}"))
        return report
    reader.fieldnames = header
    racks = {
        (key, r.name): r
        for r in Rack.objects.select_related("site")
        for key in (r.site.slug, r.site.name)
    }
    with transaction.atomic():
        for row in reader:
            line = reader.line_num
            if not any((v or "").strip() for v in row.values()):
                continue
            try:
                with transaction.atomic():
                    services.create_node(**_row_to_kwargs(row, racks))
                report.created += 1
            except ValidationError as exc:
                report.errors.extend(_errors_of(exc, line))
        if report.errors:
            transaction.set_rollback(True)
            report.created = 0
    return report
