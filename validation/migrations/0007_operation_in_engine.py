"""Its foreign key to Operation now names engine.Operation (moved from inventory, in
Django's state only: the table and its rows stay)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('engine', '0002_operation_worker_from_inventory'),
        ('validation', '0006_gate_step_not_before'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='gaterun',
                    name='operation',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='engine.operation'),
                ),
            ],
        ),
    ]
