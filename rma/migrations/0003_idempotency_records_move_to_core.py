"""Idempotency records move to core (node actions and imports honour the key too): the
answers already given are copied, so a ticketing system retrying across the upgrade is
still answered, not applied twice."""

from django.db import migrations


def copy(apps, schema_editor):
    # One statement, whatever the count: the records were never pruned, and auto_now_add
    # would stamp every copy with today where this keeps the first answer's time.
    old = apps.get_model("rma", "IdempotencyRecord")._meta.db_table
    new = apps.get_model("core", "IdempotencyRecord")._meta.db_table
    columns = "actor, key, fingerprint, status_code, body, created"
    # An empty JSON object in each backend's spelling: SQLite (`make run`) keeps JSON as
    # text and knows no ::jsonb cast.
    empty = "'{}'::jsonb" if schema_editor.connection.vendor == "postgresql" else "'{}'"
    schema_editor.execute(
        f"INSERT INTO {new} ({columns}, headers) SELECT {columns}, {empty} FROM {old}"
    )


class Migration(migrations.Migration):

    dependencies = [
        ('rma', '0002_copy_inventory_cases'),
        ('core', '0002_idempotencyrecord'),
    ]

    operations = [
        migrations.RunPython(copy, migrations.RunPython.noop),
        migrations.DeleteModel(
            name='IdempotencyRecord',
        ),
    ]
