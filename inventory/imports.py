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

from . import enrolment
from .models import Rack

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
    errors: list[RowError] = field(default_factory=list)

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
        kwargs["labels"] = row["labels"].replace(";", " ").split()
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


def import_rows(rows: list[Row], tracker: Tracker | None = None) -> ImportReport:
    """Check every row, then write them all in one transaction, or none."""
    tracker = tracker or Tracker()
    report = ImportReport(rows=len(rows))
    racks: dict[tuple[str, str], Rack] = {}
    for r in Rack.objects.select_related("site"):
        racks[(r.site.slug, r.name)] = racks[(r.site.name, r.name)] = r
    sites = {key[0] for key in racks}
    batch: list[tuple[int, enrolment.Enrolment]] = []
    step = max(100, len(rows) // 50)
    for index, (line, row) in enumerate(rows, 1):
        try:
            batch.append((line, enrolment.build(**_row_to_kwargs(row, racks, sites))))
        except ValidationError as exc:
            report.errors.extend(_errors_of(exc, line))
        if index % step == 0 or index == len(rows):
            tracker.progress(index, len(rows))
    with transaction.atomic():
        tracker.claim()
        enrolment.check_against_fleet([e for _, e in batch])
        for line, e in batch:
            if e.errors:
                report.errors.extend(_errors_of(ValidationError(e.errors.errors), line))
        if report.errors:
            report.errors.sort(key=lambda e: (e.line, FIELD_ORDER.get(e.field, len(FIELD_ORDER))))
            return report
        enrolment.write([e for _, e in batch])
        report.created = len(batch)
        tracker.succeeded(report)
    return report


def import_nodes(source: IO | bytes | str, actor: str = "system") -> ImportReport:
    """Import every row or none, here and now (the management command). `source` is a
    binary or text file object; a file that cannot be read is reported as its one error."""
    try:
        rows = read_rows(decode(source))
    except ImportRefused as exc:
        return ImportReport(errors=[exc.error])
    return import_rows(rows)
