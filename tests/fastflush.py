"""Emptying the database after a transactional test, in a fraction of Django's time.

Django's TransactionTestCase ends each test with `manage.py flush`: one TRUNCATE of every
table, then the post_migrate signal, which writes the content types and permissions back.
On PostgreSQL that took 0.75 s a test here (TRUNCATE makes new files for each of ~150
tables and their indexes, most of them empty; post_migrate re-reads every model), and
some 500 tests pay it: minutes of every `make test`.

Here the tables that hold rows are found in one query and emptied with DELETE in one
transaction, the foreign keys checked at its end (Django declares them DEFERRABLE
INITIALLY DEFERRED), and the content types and permissions that migrate made are kept
rather than written again. The result is Django's: every table as migrate left it.
Where that cannot be promised, Django's own flush runs: another database than
PostgreSQL, a test with serialized rollback or available_apps, or a test that changed
the content types or permissions (their row counts differ from the session's start).
"""

from __future__ import annotations

from django.db import connections, transaction
from django.test import TransactionTestCase

KEPT = ("django_content_type", "auth_permission")  # as migrate's post_migrate wrote them
_django_teardown = TransactionTestCase._fixture_teardown
_kept_counts: dict[str, tuple[int, ...]] = {}


def _counts(cursor) -> tuple[int, ...]:
    cursor.execute(" UNION ALL ".join(f"SELECT count(*) FROM {t}" for t in KEPT))
    return tuple(row[0] for row in cursor.fetchall())


def _empty(db_name: str) -> bool:
    """Delete every row of a PostgreSQL test database but the kept tables'; False where
    Django's flush must run instead."""
    connection = connections[db_name]
    if connection.vendor != "postgresql":
        return False
    quote = connection.ops.quote_name
    tables = [
        t for t in connection.introspection.django_table_names(only_existing=True) if t not in KEPT
    ]
    with transaction.atomic(using=db_name), connection.cursor() as cursor:
        if _kept_counts.get(db_name) != _counts(cursor):
            return False
        cursor.execute(
            " UNION ALL ".join(
                f"SELECT %s WHERE EXISTS (SELECT 1 FROM {quote(t)})" for t in tables
            ),
            tables,
        )
        holding = [row[0] for row in cursor.fetchall()]
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in holding:
            cursor.execute(f"DELETE FROM {quote(table)}")
    return True


def remember(db_name: str = "default") -> None:
    """The kept tables' row counts as migrate left them (tests/conftest.py, right after
    the test database is made)."""
    connection = connections[db_name]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            _kept_counts[db_name] = _counts(cursor)


def _fixture_teardown(self: TransactionTestCase) -> None:
    if self.available_apps is not None or self.serialized_rollback:
        return _django_teardown(self)
    names = list(self._databases_names(include_mirrors=False))
    if not all(_empty(name) for name in names):
        return _django_teardown(self)
    return None


def install() -> None:
    """Called once per pytest process (tests/conftest.py)."""
    TransactionTestCase._fixture_teardown = _fixture_teardown  # type: ignore[method-assign]
