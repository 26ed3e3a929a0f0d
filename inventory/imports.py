"""Bulk enrolment from CSV: every row or none, every bad row reported with its line and field.

Reading the file (refused whole when it cannot be an import), turning rows into enrolments
(inventory.enrolment's rules, checked row by row outside any transaction, then against the
fleet and written in one), and the report. import_operations.py runs this as an Operation
with progress; the management command runs it here and now.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import IO

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction

from core import csvsafe

from . import enrolment, services
from .macs import mac_or_none as normalise_mac_or_none
from .models import Node, Rack

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
OPTIONAL = (
    "u_height",
    "role",
    "fabric",
    "labels",
    "boot_ip",
    "bmc_port",
    "bmc_verify_tls",
    "system_id",
    "gpu_system_id",
)
# The downloadable template (/nodes/import/template.csv): the header and one example row.
EXAMPLE = {
    "site": "dc1",
    "rack": "r01",
    "rack_unit": "1",
    "serial": "SN-EXAMPLE-1",
    "hostname": "gpu00001",
    "model": "HGX H100 8-GPU",
    "gpu_model": "H100-SXM",
    "gpu_count": "8",
    "bmc_protocol": "redfish",
    "bmc_address": "https://10.0.0.21",
    "bmc_username": "admin",
    "bmc_password": "change-me",
    "boot_mac": "52:54:00:ab:cd:ef",
    "u_height": "4",
    "role": "compute",
    "fabric": "",
    "labels": "h100;prod",
    "boot_ip": "",
    "bmc_port": "",
    "bmc_verify_tls": "true",
    "system_id": "",
    "gpu_system_id": "",
}
TRUE, FALSE = ("true", "yes", "1", "y"), ("false", "no", "0", "n")
MAX_BYTES = 20 * 1024 * 1024
# Errors are listed in the file's column order within a row.
FIELD_ORDER = {name: i for i, name in enumerate(("row", *COLUMNS, *OPTIONAL))}


@dataclass
class RowError:
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.field}: {self.message}"


@dataclass
class ImportReport:
    rows: int = 0
    created: int = 0
    updated: int = 0
    errors: list[RowError] = field(default_factory=list)
    # (line, "create" | "update", hostname) of each row, for a preview.
    planned: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


class ImportRefused(Exception):
    """The file cannot be read as an import at all (HTTP 400); nothing was accepted."""

    def __init__(self, error: RowError):
        self.error = error
        super().__init__(f"line {error.line}: {error.message}" if error.line else error.message)


Row = tuple[int, dict[str, str]]


def decode(source: IO | bytes | str) -> str:
    """The uploaded file as text; raises ImportRefused if it is too large or not UTF-8."""
    raw = source if isinstance(source, bytes | str) else source.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise ImportRefused(RowError(0, "file", "The file is larger than 20 MiB; split it."))
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise ImportRefused(
            RowError(0, "file", f"Not UTF-8 text (byte {exc.start}); save it as CSV UTF-8.")
        ) from None
    if "\0" in text:  # csv reads it; PostgreSQL cannot store it
        line = text.count("\n", 0, text.index("\0")) + 1
        raise ImportRefused(RowError(line, "file", "A NUL byte: this is not a text CSV file."))
    return text


def read_rows(text: str) -> list[Row]:
    """The file's non-blank rows as (line, {column: value}); raises ImportRefused."""
    reader = csv.DictReader(io.StringIO(text), restval="")
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise ImportRefused(RowError(1, "header", f"missing columns: {', '.join(missing)}"))
        reader.fieldnames = header
        rows = []
        for row in reader:
            values = {k: (v or "") for k, v in row.items() if k is not None}
            if any(v.strip() for v in values.values()):
                rows.append((reader.line_num, values))
    except csv.Error as exc:
        raise ImportRefused(RowError(reader.line_num, "file", f"not CSV: {exc}")) from None
    return rows


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError({name: f"'{value}' is not a whole number."})


def _row_to_kwargs(row: dict[str, str], racks: dict[tuple[str, str], Rack], sites: set) -> dict:
    site, rack_name = row["site"].strip(), row["rack"].strip()
    rack = racks.get((site, rack_name))
    if rack is None:
        where = f"site '{site}'" if site in sites else f"an unknown site '{site}'"
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
        kwargs["labels"] = row["labels"].replace(";", " ").replace(",", " ").split()
    if row.get("fabric"):
        kwargs["fabric"] = row["fabric"].strip()
    if row.get("bmc_port", "").strip():
        kwargs["bmc"]["port"] = _int(row["bmc_port"], "bmc.port")
    if row.get("bmc_verify_tls", "").strip():
        flag = row["bmc_verify_tls"].strip().lower()
        if flag not in TRUE + FALSE:
            raise ValidationError({"bmc.verify_tls": f"'{flag}' is not true or false."})
        kwargs["bmc"]["verify_tls"] = flag in TRUE
    for column in ("system_id", "gpu_system_id"):
        if row.get(column, "").strip():
            kwargs["bmc"][column] = row[column].strip()
    if row["boot_mac"].strip():
        nic = {"mac": row["boot_mac"].strip(), "boot": True}
        if row.get("boot_ip"):
            nic["ip"] = row["boot_ip"].strip()
        kwargs["interfaces"].append(nic)
    return kwargs


def _column(name: str) -> str:
    """The CSV column an enrolment's error key names ("interfaces[0].mac" -> "boot_mac")."""
    if name == NON_FIELD_ERRORS:
        return "row"
    if name in ("bmc.system_id", "bmc.gpu_system_id"):
        return name.removeprefix("bmc.")
    return name.replace("interfaces[0].", "boot_").replace("bmc.", "bmc_")


def _errors_of(exc: ValidationError, line: int) -> list[RowError]:
    if hasattr(exc, "error_dict"):
        return [
            RowError(line, _column(name), msg)
            for name, errs in exc.message_dict.items()
            for msg in errs
        ]
    return [RowError(line, "row", msg) for msg in exc.messages]


class Tracker:
    """What an import tells its operation: progress while rows are checked, a claim at the
    start of the write transaction, success inside it. The plain import has none."""

    def progress(self, done: int, total: int) -> None:
        pass

    def claim(self) -> None:
        pass

    def succeeded(self, report: ImportReport) -> None:
        pass


def _existing(rows: list[Row]) -> dict[str, Node]:
    """The enrolled nodes the rows' serials name (an import that updates them)."""
    serials = sorted({row["serial"].strip() for _, row in rows if row["serial"].strip()})
    found: dict[str, Node] = {}
    for start in range(0, len(serials), enrolment.CHUNK):
        chunk = serials[start : start + enrolment.CHUNK]
        found.update((n.serial, n) for n in Node.objects.filter(serial__in=chunk))
    return found


def _update(node: Node, kwargs: dict) -> None:
    """A row that names an enrolled serial: the node's fields, BMC and labels as the API's
    update writes them (an empty password keeps the stored one; a new BMC destination
    needs it). Its NICs are changed on its page or /api/v1/interfaces/, as through the API."""
    nics = kwargs.pop("interfaces")
    if nics:
        given = normalise_mac_or_none(nics[0]["mac"])
        boot = node.interfaces.filter(boot=True).values_list("mac", flat=True).first()
        if given != boot:
            raise ValidationError(
                {
                    "interfaces[0].mac": f"{node.hostname} boots from {boot or 'no interface'}: "
                    "change an enrolled node's interfaces on its page or through "
                    "/api/v1/interfaces/."
                }
            )
    services.update_node(node, **kwargs)


def import_rows(
    rows: list[Row], tracker: Tracker | None = None, *, update: bool = False, dry_run: bool = False
) -> ImportReport:
    """Check every row, then write them all in one transaction, or none.

    `update`: a row whose serial is enrolled updates that node instead of being refused as
    a duplicate. `dry_run`: everything is done and checked in the transaction, which is
    then rolled back: the report says what would be created and updated, or every problem.
    """
    tracker = tracker or Tracker()
    report = ImportReport(rows=len(rows))
    racks: dict[tuple[str, str], Rack] = {}
    for r in Rack.objects.select_related("site"):
        racks[(r.site.slug, r.name)] = racks[(r.site.name, r.name)] = r
    sites = {key[0] for key in racks}
    existing = _existing(rows) if update else {}
    batch: list[tuple[int, enrolment.Enrolment]] = []
    updates: list[tuple[int, Node, dict]] = []
    step = max(100, len(rows) // 50)
    for index, (line, row) in enumerate(rows, 1):
        try:
            kwargs = _row_to_kwargs(row, racks, sites)
            if kwargs["serial"] in existing:
                updates.append((line, existing[kwargs["serial"]], kwargs))
            else:
                batch.append((line, enrolment.build(**kwargs)))
        except ValidationError as exc:
            report.errors.extend(_errors_of(exc, line))
        if index % step == 0 or index == len(rows):
            tracker.progress(index, len(rows))
    with transaction.atomic():
        tracker.claim()
        # Updates first: a node moved out of a unit frees it for a new one of the file.
        for line, node, kwargs in updates:
            try:
                with transaction.atomic():
                    _update(node, kwargs)
            except ValidationError as exc:
                report.errors.extend(_errors_of(exc, line))
        enrolment.check_against_fleet([e for _, e in batch])
        for line, e in batch:
            if e.errors:
                report.errors.extend(_errors_of(ValidationError(e.errors.errors), line))
        if report.errors:
            report.errors.sort(key=lambda e: (e.line, FIELD_ORDER.get(e.field, len(FIELD_ORDER))))
            transaction.set_rollback(True)  # the updates already made go too
            return report
        enrolment.write([e for _, e in batch])
        report.created, report.updated = len(batch), len(updates)
        planned = [(line, "create", e.node.hostname) for line, e in batch]
        planned += [(line, "update", node.hostname) for line, node, _ in updates]
        report.planned = sorted(planned)
        if dry_run:
            transaction.set_rollback(True)
            return report
        tracker.succeeded(report)
    return report


def preview(source: IO | bytes | str, update: bool = False) -> ImportReport:
    """What importing `source` would do, writing nothing; raises ImportRefused as an
    upload would."""
    rows = read_rows(decode(source))
    if not rows:
        raise ImportRefused(RowError(0, "file", "The file has a header but no rows."))
    return import_rows(rows, update=update, dry_run=True)


def template_csv() -> str:
    """The header of every column and one example row."""
    out = io.StringIO()
    writer = csvsafe.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, *OPTIONAL])
    writer.writerow([EXAMPLE[name] for name in (*COLUMNS, *OPTIONAL)])
    return out.getvalue()


def import_nodes(source: IO | bytes | str, actor: str = "system") -> ImportReport:
    """Import every row or none, here and now (the management command). `source` is a
    binary or text file object; a file that cannot be read is reported as its one error."""
    try:
        rows = read_rows(decode(source))
    except ImportRefused as exc:
        return ImportReport(errors=[exc.error])
    return import_rows(rows)
