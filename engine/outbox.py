"""The engine's outbox: work is a row, committed before its message is sent, and whatever
did not reach a worker is sent again from the database.

Operations (`inventory.operations.OUTBOX`) and gate steps (`validation.steps.OUTBOX`) go
through this one implementation; each says where its columns are and how to publish one
row. The promise, written once:

- **Sent after commit.** The caller's transaction records the row, the message goes out
  once it commits (a worker must find the row).
- **A broker that is down loses nothing.** The row is marked UNSENT and `resend` sends it
  when the broker is back; the request that accepted the work still answers 202.
- **A wait is a row** (`defer`): `not_before` and `attempts`, never a broker countdown. This
  process's waker sends it on time; `send_due` does should this process die first. Each
  due send is claimed (DEFERRED -> QUEUED) by a conditional UPDATE, so never sent twice.
- **Lost messages are sent again** (`resend`): UNSENT rows, QUEUED ones whose sender died
  between its commit and its send, ones sent long ago that no worker began (a Redis
  restarted empty, a worker killed holding it), and what the kind adds (`lost`: a gate
  step whose worker died mid-step).

Sending twice is harmless by design: the task's claim (an operation's begin, a gate
step's number under the node lock) lets exactly one run do the work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from django.db.models import Case, F, Q, QuerySet, Value, When
from django.utils import timezone

from webhooks import outbox as core_outbox

from .waker import WAKER

log = logging.getLogger(__name__)

# What a row's task-id column holds before it has a real one: claimed and about to be sent
# (QUEUED), accepted but refused by the broker (UNSENT), waiting for its `not_before`
# (DEFERRED).
QUEUED = "queued"
UNSENT = "unsent"
DEFERRED = "deferred"
PLACEHOLDERS = ("", UNSENT, QUEUED, DEFERRED)
# What the broker client raises when it cannot publish: one list, core's, which the
# webhook pumps below the engine use too.
PUBLISH_ERRORS = core_outbox.PUBLISH_ERRORS

Row = Any  # a model instance of the outbox's kind


@dataclass(frozen=True)
class Outbox:
    """One kind of row-backed work and where its outbox columns are."""

    name: str  # in log lines: "operation", "gate run"
    active: Callable[[], QuerySet[Any]]  # rows whose work is not over (what may be sent)
    publish: Callable[[Row], str | None]  # send the row's message; the broker's task id
    not_begun: Q  # sent, and no worker has begun it
    born: str  # when the row was first queued (a QUEUED row never sent is dated by it)
    sendable: Q = field(default_factory=Q)  # rows that have a task at all
    guard: Callable[[Row], Q] = lambda _row: Q()  # the row is still at this message's work
    lost: Callable[[], Q] | None = None  # also resent: begun by a worker since dead (now)
    before_resend: Callable[[Row], None] | None = None  # said and done before a resend
    unsent_note: dict[str, Any] = field(default_factory=dict)  # also written when refused
    task_id: str = "task_id"
    sent: str = "sent"
    not_before: str = "not_before"
    attempts: str = "attempts"

    def send(self, row: Row, only: Q | None = None, also: dict[str, Any] | None = None) -> bool:
        """Publish `row`'s message and record it (task id, when sent); False if the broker
        refused it (the row is UNSENT now, and `resend` takes over)."""
        mine = self.active().filter(pk=row.pk).filter(self.guard(row))
        if only is not None:
            mine = mine.filter(only)
        also = also or {}
        try:
            task_id = self.publish(row)
        except PUBLISH_ERRORS as exc:
            log.warning("%s %s accepted but not sent (%s); will resend", self.name, row.pk, exc)
            self._note(mine, **{self.task_id: UNSENT}, **self.unsent_note, **also)
            return False
        fields = {self.task_id: task_id or "", self.sent: timezone.now(), self.not_before: None}
        # Not over a deferral: the worker may have taken the message and deferred the work
        # (its node still held) before this line runs. Overwriting DEFERRED would clear its
        # `not_before` and leave the waker nothing due: the work waited for the sweep.
        self._note(mine.exclude(**{self.task_id: DEFERRED}), **fields, **also)
        return True

    def send_many(self, rows: list[Row], also: dict[str, Any] | None = None) -> int:
        """`send` for many rows (a bulk action's children): each message published, then
        recorded in one UPDATE per 500 rows, not one per row, which cost a 1,000-node
        bulk power cycle 25 s of its request (the workers were already updating the rows
        whose messages had gone). After the broker's first refusal the rest are not
        tried: all are marked UNSENT for `resend`, rather than each waiting on a broker
        that is down. How many were sent."""
        also = also or {}
        sent: list[tuple[Row, str]] = []
        refused: list[Row] = []
        for row in rows:
            if refused:
                refused.append(row)
                continue
            try:
                sent.append((row, self.publish(row) or ""))
            except PUBLISH_ERRORS as exc:
                log.warning("%s %s accepted but not sent (%s); will resend", self.name, row.pk, exc)
                refused.append(row)
        now = timezone.now()
        for start in range(0, len(sent), 500):
            batch = sent[start : start + 500]
            task_ids = Case(*[When(pk=row.pk, then=Value(task_id)) for row, task_id in batch])
            fields = {self.task_id: task_ids, self.sent: now, self.not_before: None}
            mine = self.active().filter(self._each([row for row, _ in batch]))
            self._note(mine.exclude(**{self.task_id: DEFERRED}), **fields, **also)
        for start in range(0, len(refused), 500):
            mine = self.active().filter(self._each(refused[start : start + 500]))
            self._note(mine, **{self.task_id: UNSENT}, **self.unsent_note, **also)
        return len(sent)

    def _each(self, rows: list[Row]) -> Q:
        """These rows, each still at its message's work (`guard`)."""
        guards = [self.guard(row) for row in rows]
        if not any(guards):
            return Q(pk__in=[row.pk for row in rows])
        combined = Q()
        for row, guard in zip(rows, guards, strict=True):
            combined |= Q(pk=row.pk) & guard
        return combined

    def _note(self, rows: QuerySet[Any], **fields: Any) -> None:
        """Record how a send went. This runs after the row committed (often inside the
        request that accepted it): a database connection lost here must not turn that
        acceptance into an error. Left unrecorded, a sent row still reads "queued", and
        `resend` may send it again, which its task's claim makes harmless."""
        try:
            rows.update(**fields)
        except DatabaseError as exc:
            log.warning("could not record a send (%s); the resend sweep will see to it", exc)
            connections[DEFAULT_DB_ALIAS].close()

    def defer(
        self, pk: int, seconds: float, only: Q | None = None, count: bool = True, **also: Any
    ) -> bool:
        """Run the row's work again in `seconds`: recorded as `not_before`, the attempt
        counted (unless `count` is False: a wait for its turn); the waker sends it on
        time. False if its work ended meanwhile."""
        rows = self.active().filter(pk=pk)
        if only is not None:
            rows = rows.filter(only)
        deferred = rows.update(
            **{
                self.task_id: DEFERRED,
                self.not_before: timezone.now() + timedelta(seconds=seconds),
                self.attempts: F(self.attempts) + int(count),
            },
            **also,
        )
        if deferred:
            transaction.on_commit(lambda: WAKER.after(seconds, lambda: self.send_if_due(pk)))
        return bool(deferred)

    def _due(self) -> QuerySet[Any]:
        lookups = {self.task_id: DEFERRED, f"{self.not_before}__lte": timezone.now()}
        return self.active().filter(self.sendable, **lookups)

    def send_if_due(self, pk: int) -> bool | None:
        """Send one deferred row whose time has come, claimed first (DEFERRED -> QUEUED) so
        the waker and the sweep never both send it. None if it is not due or someone else
        sent it; False if the broker refused it. A process that dies between the claim and
        the send leaves it QUEUED, which `resend` sends."""
        claimed = (
            self._due().filter(pk=pk).update(**{self.task_id: QUEUED, self.sent: timezone.now()})
        )
        if not claimed:
            return None
        row = self.active().filter(pk=pk).first()
        return True if row is None else self.send(row)

    def send_due(self, limit: int = 1000) -> int:
        """Sweep: send the deferred rows whose `not_before` has come (their waker was lost
        with its process, or the wait was recorded outside a worker)."""
        sent = 0
        due = self._due().order_by(self.not_before, "pk").values_list("pk", flat=True)
        for pk in list(due[:limit]):
            outcome = self.send_if_due(pk)
            if outcome is False:
                break  # the broker is down: the next sweep tries again
            sent += bool(outcome)
        return sent

    def stranded(self, older_than: float, resend_after: float) -> QuerySet[Any]:
        """Rows whose message never reached a worker, or whose worker was lost."""
        now = timezone.now()
        cutoff = now - timedelta(seconds=older_than)
        queued_long_ago = Q(**{self.task_id: QUEUED}) & (
            Q(**{f"{self.sent}__lt": cutoff})
            | Q(**{f"{self.sent}__isnull": True, f"{self.born}__lt": cutoff})
        )
        never_started = (
            Q(**{f"{self.sent}__lt": now - timedelta(seconds=resend_after)})
            & ~Q(**{f"{self.task_id}__in": PLACEHOLDERS})
            & self.not_begun
        )
        wanted = Q(**{self.task_id: UNSENT}) | queued_long_ago | never_started
        if self.lost is not None:
            wanted |= self.lost()
        return self.active().filter(self.sendable).filter(wanted).order_by("pk")

    def resend(self, older_than: float, resend_after: float, limit: int = 1000) -> int:
        """Sweep: send again what `stranded` finds; stops at the first refusal (the broker
        is still down: the next sweep tries again)."""
        sent = 0
        for row in self.stranded(older_than, resend_after)[:limit]:
            if self.before_resend is not None:
                self.before_resend(row)
            if not self.send(row):
                break
            sent += 1
        return sent
