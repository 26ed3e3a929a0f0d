"""Its foreign key to Operation now names engine.Operation (moved from inventory, in
Django's state only: the table and its rows stay)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('day2', '0002_campaign_operation'),
        ('engine', '0002_operation_worker_from_inventory'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='campaign',
                    name='operation',
                    field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='campaign', to='engine.operation'),
                ),
                migrations.AlterField(
                    model_name='campaignnode',
                    name='operation',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='engine.operation'),
                ),
            ],
        ),
    ]
