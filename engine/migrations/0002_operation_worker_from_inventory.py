"""Operation and Worker move from inventory to the engine: in Django's state only. Their
tables keep their names (inventory_operation, inventory_worker), so no row moves."""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('engine', '0001_initial'),
        ('inventory', '0023_operation_not_before'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Worker',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200, unique=True)),
                        ('queues', models.CharField(max_length=1000)),
                        ('started', models.DateTimeField()),
                        ('last_seen', models.DateTimeField(db_index=True)),
                    ],
                    options={
                        'db_table': 'inventory_worker',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='Operation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(db_index=True, max_length=40)),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('cancelled', 'Cancelled'), ('skipped', 'Skipped')], db_index=True, default='pending', max_length=12)),
                        ('progress', models.PositiveSmallIntegerField(default=0, validators=[django.core.validators.MaxValueValidator(100)])),
                        ('message', models.TextField(blank=True)),
                        ('error', models.TextField(blank=True)),
                        ('params', models.JSONField(blank=True, default=dict)),
                        ('result', models.JSONField(blank=True, default=dict)),
                        ('actor', models.CharField(max_length=150)),
                        ('task_id', models.CharField(blank=True, max_length=64)),
                        ('task_name', models.CharField(blank=True, max_length=100)),
                        ('worker', models.CharField(blank=True, max_length=200)),
                        ('sent', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat', models.DateTimeField(blank=True, null=True)),
                        ('not_before', models.DateTimeField(blank=True, db_index=True, help_text='When a deferred operation (a retry, a wait for its node) is sent again.', null=True)),
                        ('attempts', models.PositiveSmallIntegerField(default=0, help_text='How many times it was deferred (retries and waits).')),
                        ('created', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('started', models.DateTimeField(blank=True, null=True)),
                        ('finished', models.DateTimeField(blank=True, null=True)),
                        ('node', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='operations', to='inventory.node')),
                        ('parent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='children', to='engine.operation')),
                        ('rack', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='operations', to='inventory.rack')),
                    ],
                    options={
                        'db_table': 'inventory_operation',
                        'ordering': ['-created', '-id'],
                    },
                ),
            ],
        ),
    ]
