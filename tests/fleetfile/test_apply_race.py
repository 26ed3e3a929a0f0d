"""Another writer takes a key between an apply's checks and its insert: the apply ends with
one problem in words (nothing written), not the database's own message naming its tables.

Real concurrency on PostgreSQL: a second connection inserts site dc1 and holds its
transaction open; the apply, which could not see the row, blocks on the unique index;
once PostgreSQL shows it waiting for that lock, the other writer commits."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from fleetfile import apply as applying
from fleetfile.apply import TAKEN_MEANWHILE
from fleetfile.loading import FleetFileError
from inventory.models import Node, Rack, Site
from tests.peers.util import wait_until

from .fleet import SECRETS, sources

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]


def test_a_site_taken_while_the_apply_writes_is_one_problem_and_nothing_is_written():
    inserted, failures = threading.Event(), []

    def other_writer() -> None:
        try:
            with transaction.atomic():
                Site.objects.create(slug="dc1", name="Somebody else's")
                inserted.set()
                wait_until(
                    lambda: apply_waits_for_a_lock(),
                    timeout=60,
                    interval=0.05,
                    what="the apply to wait for the other writer's row",
                )
        except Exception as exc:  # reported by the test, not lost in the thread
            failures.append(exc)
            inserted.set()
        finally:
            connection.close()

    writer = threading.Thread(target=other_writer)
    writer.start()
    assert inserted.wait(30)
    try:
        with pytest.raises(FleetFileError) as raised:
            applying.apply(sources(), SECRETS, actor="user:alice")
    finally:
        writer.join(60)
    assert failures == []
    assert [p.message for p in raised.value.problems] == [TAKEN_MEANWHILE]
    assert str(raised.value) == TAKEN_MEANWHILE
    assert list(Site.objects.values_list("name", flat=True)) == ["Somebody else's"]
    assert not Rack.objects.exists() and not Node.objects.exists()


def apply_waits_for_a_lock() -> bool:
    """Some backend waits for a lock this writer holds: the apply (its site's insert, or
    the content type the writer's audit entry added). Not any waiter of the database: a
    worker another test of the process started may be waiting on one of its own, and the
    writer would then commit before the apply had looked."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"
        )
        return cursor.fetchone()[0] > 0
