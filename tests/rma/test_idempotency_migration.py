"""Upgrading keeps the answers already given under an `Idempotency-Key` (the records moved
from rma to core), so a ticketing system's retry across the upgrade is still a replay."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("rma", "0002_copy_inventory_cases"), ("core", "0001_initial")]


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
@pytest.mark.django_db(transaction=True)
def test_recorded_answers_are_copied_to_core_with_their_time():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    first = timezone.now() - timedelta(days=3)
    try:
        old = executor.loader.project_state(BEFORE).apps
        Old = old.get_model("rma", "IdempotencyRecord")
        Old.objects.create(
            actor="token:itsm",
            key="INC-9-note",
            fingerprint="f" * 64,
            status_code=201,
            body={"id": 7, "kind": "note"},
        )
        Old.objects.update(created=first)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    from core.models import IdempotencyRecord

    record = IdempotencyRecord.objects.get()
    assert (record.actor, record.key, record.status_code) == ("token:itsm", "INC-9-note", 201)
    assert record.body == {"id": 7, "kind": "note"} and record.fingerprint == "f" * 64
    assert record.created == first and record.headers == {}
