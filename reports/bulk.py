"""Inserting a few million rows fast, with the timestamps we choose.

Backdating. LifecycleEvent.created, Rack.created, Node.created, Node.state_changed,
GateRun.started, CheckResult.created and CaseEvent.created are `auto_now_add`, and
Django's pre_save overwrites them with the current time even in bulk_create. Two ways
around it, both writing the chosen value in the INSERT itself (no UPDATE pass afterwards):

- `insert()` on PostgreSQL writes plain rows with COPY: no model instances, no pre_save,
  the values go to the table as given. This is what makes a year of a 12,500-node fleet
  take a few minutes rather than many: Django's bulk_create spends most of its time
  building instances and adapting the parameter arrays of its INSERT.
- Everywhere else (`insert()` on SQLite, and the modest tables written with bulk_create)
  `backdated()` switches auto_now_add off on exactly those fields for the duration of the
  write. It mutates the shared field objects, so it is for a management command or a
  test, never for a request-serving process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.models import DateTimeField, JSONField, Model

from inventory.models import LifecycleEvent, Node, Rack
from rma.models import CaseEvent
from validation.models import CheckResult, GateRun

BATCH = 5000

# (model, field) pairs whose auto_now_add the seeder turns off while it writes.
BACKDATED: tuple[tuple[type[Model], str], ...] = (
    (Rack, "created"),
    (Node, "created"),
    (Node, "state_changed"),
    (LifecycleEvent, "created"),
    (GateRun, "started"),
    (CheckResult, "created"),
    (CaseEvent, "created"),
)


@contextmanager
def backdated() -> Iterator[None]:
    """Let the fields in BACKDATED keep the values the seeder gives them."""
    fields: list[DateTimeField] = [m._meta.get_field(f) for m, f in BACKDATED]  # type: ignore[misc]
    saved = [f.auto_now_add for f in fields]
    for f in fields:
        f.auto_now_add = False
    try:
        yield
    finally:
        for f, value in zip(fields, saved, strict=True):
            f.auto_now_add = value


def bulk(model: type[Model], objs: list[Model]) -> list[Model]:
    """bulk_create in batches; the objects come back with their primary keys."""
    return model.objects.bulk_create(objs, batch_size=BATCH)  # type: ignore[attr-defined]


def insert(model: type[Model], rows: list[dict[str, Any]], ids: bool = False) -> list[int]:
    """Insert `rows` (column attname -> value; missing columns take the field default).
    With `ids`, return the new primary keys in row order (on PostgreSQL they are taken
    from the table's sequence first, so COPY can write them)."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        with backdated():
            made = bulk(model, [model(**row) for row in rows])
        return [obj.pk for obj in made] if ids else []
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    if ids:
        new_ids = reserve_ids(model, len(rows))
        for row, pk in zip(rows, new_ids, strict=True):
            row[meta.pk.attname] = pk
        fields = [meta.pk, *fields]
    defaults = {f.attname: None if f.primary_key else f.get_default() for f in fields}
    is_json = [isinstance(f, JSONField) for f in fields]
    names = [f.attname for f in fields]
    columns = ", ".join(connection.ops.quote_name(f.column or f.attname) for f in fields)
    dumped: dict[int, str] = {}  # the same dict (a profile spec) is dumped once

    def value(obj: Any, json_column: bool) -> Any:
        if not json_column:
            return obj
        key = id(obj)
        if key not in dumped:
            dumped[key] = json.dumps(obj)
        return dumped[key]

    with connection.cursor() as cursor:
        sql = f"COPY {connection.ops.quote_name(meta.db_table)} ({columns}) FROM STDIN"
        with cursor.cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(
                    [
                        value(row.get(name, defaults[name]), j)
                        for name, j in zip(names, is_json, strict=True)
                    ]
                )
    return new_ids if ids else []


def reserve_ids(model: type[Model], count: int) -> list[int]:
    """`count` primary keys from the table's own sequence: no other writer can get them."""
    table, pk = model._meta.db_table, model._meta.pk.column
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [table, pk, count],
        )
        return [row[0] for row in cursor.fetchall()]
