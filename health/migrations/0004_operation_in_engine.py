"""Its foreign key to Operation now names engine.Operation (moved from inventory, in
Django's state only: the table and its rows stay)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('engine', '0002_operation_worker_from_inventory'),
        ('health', '0003_event_class_as_long_as_code'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='healthevent',
                    name='operation',
                    field=models.ForeignKey(blank=True, help_text='The operation the policy started.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='health_events', to='engine.operation'),
                ),
            ],
        ),
    ]
