"""A CSV import as an Operation: accepted with the upload, carried out in the request for a
small file and by a worker on the default queue for a large one, ended once.

A file that cannot be an import at all (not UTF-8, not CSV, columns missing, no rows, too
large) is refused when it is uploaded (ImportRefused, a 400), before anything is accepted. A
file of at most CORRAL_IMPORT_SYNC_ROWS rows is then imported during the request, so its
operation has ended when the answer goes back. A larger one is recorded with its file
(ImportUpload: in the database, so any worker machine can read it; encrypted, as it holds
BMC passwords; deleted when the import ends) and its task is sent once that commits; beat's
republish sweep resends it if that send never happened.

Progress. The nodes are written in one transaction, and what a transaction writes stays
invisible to other connections until it commits: progress written from inside it would
show a polling client nothing. So imports.import_rows checks every row on its own first,
outside any transaction (fields, hostname pattern, MAC format, the BMC settings through the
driver's schema), and reports "validated N of M rows" as it goes; only then does one
transaction lock the racks, check the rows against the fleet and each other (uniqueness,
overlaps: a few queries in all) and write them with bulk_create. A second database alias
for progress writes would also show progress, but costs every worker a second connection
and keeps the slow part inside the transaction that holds the rack locks.

Once. The task claims its operation for its worker (operations.begin_operation): a
duplicate delivery while that run lives does nothing, and a heartbeat lets the watchdog fail
a run lost with its worker (not run again: the user uploads again). The write transaction
also locks the operation's row first and checks it is still active, and records the
success in that same transaction, so nodes are never written for an operation that ended
meanwhile (failed by the watchdog or its deadline), and an import is never written twice.
"""

from __future__ import annotations

import logging
from typing import IO

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction

from core.actors import acting_as
from core.text import plural

from . import operations
from .choices import ACTIVE_OPERATION_STATUSES, OperationStatus
from .imports import (
    ImportRefused,
    ImportReport,
    Row,
    RowError,
    Tracker,
    decode,
    import_rows,
    read_rows,
)
from .locking import Heartbeat, holder_of
from .models import ImportUpload, Operation

log = logging.getLogger(__name__)

KIND = "import_nodes"
TASK = "inventory.tasks.import_nodes"
# A failed operation lists this many row errors (and counts them all): a file with more
# has one systematic fault, and the list is served with every read of the operation.
MAX_LISTED_ERRORS = 1000


class ImportAbandoned(Exception):
    """The operation ended elsewhere while this run worked (the watchdog or its deadline
    failed it): this run stops and writes nothing."""


def start_import(
    source: IO | bytes | str, actor: str, filename: str = "", update: bool = False
) -> Operation:
    """Accept an upload: refuse it (ImportRefused) if it cannot be an import; import a small
    one now; record a large one, with its file, for a worker. Returns the Operation.
    `update`: rows whose serial is enrolled update those nodes (imports.import_rows)."""
    text = decode(source)
    rows = read_rows(text)
    if not rows:
        raise ImportRefused(RowError(0, "file", "The file has a header but no rows."))
    params: dict = {"file": filename[:200], "rows": len(rows)}
    if update:
        params["update"] = True
    if len(rows) <= settings.CORRAL_IMPORT_SYNC_ROWS:
        op = Operation.objects.create(kind=KIND, actor=actor, params=params)
        operations.begin_operation(op)
        execute(op, rows)
        op.refresh_from_db()
        return op
    with transaction.atomic():
        op = Operation.objects.create(
            kind=KIND,
            actor=actor,
            params=params,
            message=f"{len(rows):,} rows waiting for a worker",
            task_id=operations.QUEUED,
            task_name=TASK,
        )
        ImportUpload.objects.create(operation=op, content=text)
        operations.enqueue_on_commit(TASK, op, force=True)
    return op


def run_import(op_id: int, worker: str = "") -> str:
    """The task: claim the operation, re-read its file, import it while a heartbeat says
    this run is alive. A delivery after the end, or while another live run holds the
    operation, does nothing; a run lost with its worker is failed by the watchdog."""
    op = Operation.objects.filter(pk=op_id, kind=KIND).first()
    if op is None or op.is_finished:
        ImportUpload.objects.filter(operation_id=op_id).delete()
        return "skipped"
    if not operations.begin_operation(op, worker=worker):
        log.warning("import operation %s: duplicate delivery skipped", op_id)
        return "duplicate"
    upload = ImportUpload.objects.filter(operation_id=op_id).first()
    if upload is None:
        operations.finish_operation(
            op, OperationStatus.FAILED, "the uploaded file is gone; upload it again"
        )
        return "failed"
    try:
        rows = read_rows(upload.content)
    except ImportRefused as exc:  # accepted once, so not expected; ended all the same
        fail(op, ImportReport(errors=[exc.error]))
        return "failed"
    # The nodes are created for whoever uploaded the file: the audit trail names them.
    with Heartbeat(None, holder_of(op), op.pk), acting_as(op.actor):
        return execute(op, rows)


def purge_uploads() -> int:
    """Beat: files of imports that ended without their run deleting them (the watchdog
    failed a run lost with its worker, or one never started)."""
    ended = ImportUpload.objects.exclude(operation__status__in=ACTIVE_OPERATION_STATUSES)
    return ended.delete()[0]


class OperationTracker(Tracker):
    def __init__(self, op: Operation) -> None:
        self.op = op

    def _update(self, **fields) -> None:
        # Like operations.report_progress it writes only to an active operation, but here
        # an operation that ended elsewhere also stops this run (it is told, not skipped).
        active = Operation.objects.filter(pk=self.op.pk, status__in=ACTIVE_OPERATION_STATUSES)
        if not active.update(**fields):
            raise ImportAbandoned(self.op.pk)

    def progress(self, done: int, total: int) -> None:
        self._update(progress=90 * done // total, message=f"validated {done:,} of {total:,} rows")
        if done == total:
            self._update(message=f"checking {total:,} rows against the fleet and writing them")

    def claim(self) -> None:
        """The write transaction's first step: lock the operation's row. A second delivery
        of the task waits here until the first commits, then finds it finished."""
        locked = Operation.objects.select_for_update(no_key=True).filter(
            pk=self.op.pk, status__in=ACTIVE_OPERATION_STATUSES
        )
        if not list(locked.values_list("pk", flat=True)):
            raise ImportAbandoned(self.op.pk)

    def succeeded(self, report: ImportReport) -> None:
        """Inside the write transaction: the nodes, the end and the file's deletion commit
        together."""
        ImportUpload.objects.filter(operation_id=self.op.pk).delete()
        message = f"imported {plural(report.created, 'node')}"
        if report.updated:
            message += f", updated {report.updated:,}"
        Operation.objects.filter(pk=self.op.pk).update(message=message)
        result = {"rows": report.rows, "created": report.created}
        if self.op.params.get("update"):
            result["updated"] = report.updated
        operations.finish_operation(self.op, OperationStatus.SUCCEEDED, result=result)


def execute(op: Operation, rows: list[Row]) -> str:
    """Carry out the import of `op` and end the operation, whatever happens. Returns
    "succeeded", "failed", or "abandoned" (it ended elsewhere; this run wrote nothing)."""
    try:
        report = import_rows(rows, OperationTracker(op), update=bool(op.params.get("update")))
    except ImportAbandoned:
        # Ended elsewhere: its file goes with this run (or with beat's purge_uploads).
        ImportUpload.objects.filter(operation_id=op.pk).delete()
        return "abandoned"
    except IntegrityError:
        # Another writer took a serial, hostname, MAC or IP between the check and the insert.
        report = ImportReport(rows=len(rows))
        reason = (
            "another change enrolled one of these serials, hostnames, MACs or IPs while the "
            "import ran; nothing was imported; upload the file again"
        )
    except SoftTimeLimitExceeded:
        report = ImportReport(rows=len(rows))
        reason = "the import ran past its time limit; nothing was imported; split the file"
    except Exception as exc:  # whatever it was, the operation ends with it
        log.exception("import operation %s stopped", op.pk)
        if isinstance(exc, DatabaseError):
            connection.close()  # a cut connection: end the operation on a fresh one
        report = ImportReport(rows=len(rows))
        reason = (
            f"the import stopped on an unexpected error ({type(exc).__name__}, in the "
            "log); nothing was imported"
        )
    else:
        if report.ok:
            return "succeeded"
        reason = ""
    fail(op, report, reason)
    return "failed"


def fail(op: Operation, report: ImportReport, reason: str = "") -> None:
    rows_with_errors = len({e.line for e in report.errors})
    if not reason:
        first = "; ".join(str(e) for e in report.errors[:3])
        reason = (
            f"{len(report.errors):,} problems in {rows_with_errors:,} of {report.rows:,} rows; "
            f"nothing was imported. {first}"
        )
    result = {
        "rows": report.rows,
        "created": 0,
        "error_count": len(report.errors),
        "errors": [
            {"line": e.line, "field": e.field, "message": e.message}
            for e in report.errors[:MAX_LISTED_ERRORS]
        ],
    }
    with transaction.atomic():  # the end and the file's deletion together
        Operation.objects.filter(pk=op.pk, status__in=ACTIVE_OPERATION_STATUSES).update(
            message="nothing was imported"
        )
        operations.finish_operation(op, OperationStatus.FAILED, error=reason, result=result)
        ImportUpload.objects.filter(operation_id=op.pk).delete()
