"""The audit trail: who changed what, when, field by field, with secrets redacted.

Built on django-auditlog (jazzband) rather than django-pghistory. pghistory records
changes with PostgreSQL triggers: complete (it sees QuerySet.update() too) but it records
nothing on SQLite, where `make run` and part of the test suite run, and it cannot know the
request's user without a per-request context. auditlog works from Django's model signals
on any database, masks fields (`mask_fields` with our own callable: "***", nothing of the
value), leaves out machine-written fields (`exclude_fields`), logs many-to-many changes
(a role grant is `User.groups`) and has a LogEntry model, admin and `log_create()` API we
use for what signals cannot see (bulk-created nodes of an enrolment or CSV import).

What it cannot see, by design of signals: QuerySet.update() and bulk_create/bulk_update.
Corral's machine writes (lifecycle state, locks, power state, heartbeats, progress) go
through update() and stay out of the trail on purpose; lifecycle changes have their own
append-only rows (inventory.LifecycleEvent, with actor and reason). docs/audit.md has the list.

Layering: audit reads and registers every app's models and nothing imports it back: the
object pages load its Changes panel over HTMX (audit/views.py), as they do the RMA panel.
"""
