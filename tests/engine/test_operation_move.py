"""Operation and Worker moved from inventory to the engine in Django's state only: an
upgraded database keeps every operation, every reference to one and its content type."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# Before the move (and so before every migration that depends on it).
BEFORE = [("inventory", "0023_operation_not_before"), ("engine", "0001_initial")]


@pytest.mark.slow  # 6 s on its own (docs/testing.md: Markers)
@pytest.mark.django_db(transaction=True)
def test_operations_and_what_points_at_them_survive_the_move():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps
        site = old.get_model("inventory", "Site").objects.create(name="One", slug="one")
        rack = old.get_model("inventory", "Rack").objects.create(site=site, name="r1")
        node = old.get_model("inventory", "Node").objects.create(
            rack=rack, serial="SN-A", hostname="a", state="inspecting"
        )
        op = old.get_model("inventory", "Operation").objects.create(
            kind="inspect", node=node, actor="user:alice", status="running"
        )
        old.get_model("inventory", "Node").objects.filter(pk=node.pk).update(lock_operation=op)
        old.get_model("inventory", "Worker").objects.create(
            name="celery@w1", queues=",corral,", started=op.created, last_seen=op.created
        )
        ContentType.objects.filter(app_label="engine", model__in=["operation", "worker"]).delete()
        before = ContentType.objects.get_or_create(app_label="inventory", model="operation")[0]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    from engine.models import Operation, Worker
    from inventory.models import Node

    moved = Operation.objects.get(pk=op.pk)
    assert (moved.kind, moved.status, moved.node_id) == ("inspect", "running", node.pk)
    assert Node.objects.get(pk=node.pk).lock_operation == moved
    assert Worker.objects.filter(name="celery@w1", queues=",corral,").exists()
    # The same content type row now names the engine's model.
    assert ContentType.objects.get_for_model(Operation).pk == before.pk
