"""The webhook models move from core to their own app: in Django's state only. Their tables
keep their names (core_webhookevent, core_delivery, core_webhooksubscription,
core_webhookaudit), so no row moves; the content types follow the models (their ids stay,
so audit entries and permissions keep pointing at them)."""

from typing import Any

import core.fields
import django.db.models.deletion
from django.db import migrations, models


MODELS = ("webhookevent", "delivery", "webhooksubscription", "webhookaudit")


def move_content_types(apps: Any, schema_editor: Any) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MODELS:
        if not content_type.objects.filter(app_label="webhooks", model=model).exists():
            content_type.objects.filter(app_label="core", model=model).update(
                app_label="webhooks"
            )


def back_to_core(apps: Any, schema_editor: Any) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="webhooks", model__in=MODELS).update(app_label="core")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('core', '0003_rotatedtoken'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='WebhookAudit',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('subscription_pk', models.BigIntegerField(db_index=True)),
                        ('action', models.CharField(max_length=30)),
                        ('actor', models.CharField(max_length=150)),
                        ('changes', models.JSONField(blank=True, default=dict)),
                        ('at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ],
                    options={
                        'db_table': 'core_webhookaudit',
                        'ordering': ['-at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='WebhookEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('msg_id', models.CharField(max_length=40, unique=True)),
                        ('type', models.CharField(db_index=True, max_length=40)),
                        ('timestamp', models.DateTimeField(db_index=True)),
                        ('data', models.JSONField(default=dict)),
                        ('body', models.TextField()),
                    ],
                    options={
                        'db_table': 'core_webhookevent',
                        'ordering': ['-id'],
                    },
                ),
                migrations.CreateModel(
                    name='WebhookSubscription',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('url', models.CharField(help_text='http(s) URL the events are POSTed to.', max_length=500)),
                        ('events', models.JSONField(default=list, help_text='Event types (webhooks.outbox.EVENT_TYPES).')),
                        ('description', models.CharField(blank=True, max_length=200)),
                        ('secret', core.fields.EncryptedTextField(editable=False)),
                        ('enabled', models.BooleanField(db_index=True, default=True)),
                        ('failing', models.BooleanField(default=False, editable=False)),
                        ('failing_since', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('first_failure_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('consecutive_failures', models.PositiveIntegerField(default=0, editable=False)),
                        ('last_success_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('retry_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('backoff_step', models.PositiveSmallIntegerField(default=0, editable=False)),
                        ('pump_token', models.CharField(blank=True, editable=False, max_length=32)),
                        ('pump_lease_until', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('updated', models.DateTimeField(auto_now=True)),
                        ('created_by', models.CharField(editable=False, max_length=150)),
                    ],
                    options={
                        'db_table': 'core_webhooksubscription',
                        'ordering': ['id'],
                    },
                ),
                migrations.CreateModel(
                    name='Delivery',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='pending', max_length=10)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('next_attempt', models.DateTimeField()),
                        ('give_up_at', models.DateTimeField()),
                        ('last_attempt', models.DateTimeField(blank=True, null=True)),
                        ('last_status_code', models.PositiveSmallIntegerField(blank=True, null=True)),
                        ('last_latency_ms', models.PositiveIntegerField(blank=True, null=True)),
                        ('last_error', models.CharField(blank=True, max_length=300)),
                        ('delivered_at', models.DateTimeField(blank=True, null=True)),
                        ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='webhooks.webhookevent')),
                        ('subscription', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='webhooks.webhooksubscription')),
                    ],
                    options={
                        'db_table': 'core_delivery',
                        'ordering': ['-id'],
                        'indexes': [models.Index(fields=['subscription', 'status', 'next_attempt'], name='delivery_due_idx'), models.Index(fields=['status', 'next_attempt'], name='delivery_status_next_idx')],
                        'constraints': [models.UniqueConstraint(fields=('event', 'subscription'), name='delivery_unique_event_subscription')],
                    },
                ),
            ],
            database_operations=[migrations.RunPython(move_content_types, back_to_core)],
        ),
    ]
