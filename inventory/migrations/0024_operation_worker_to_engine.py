"""The second half of moving Operation and Worker to the engine (engine 0002): inventory's
foreign keys point at engine.Operation and the models leave inventory's state. Nothing
changes in the database but the content types, renamed so that permissions and any
generic reference follow the models."""

import django.db.models.deletion
from django.db import migrations, models


def rename_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in ("operation", "worker"):
        if not content_type.objects.filter(app_label="engine", model=model).exists():
            content_type.objects.filter(app_label="inventory", model=model).update(
                app_label="engine"
            )


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('day2', '0003_operation_in_engine'),
        ('engine', '0002_operation_worker_from_inventory'),
        ('health', '0004_operation_in_engine'),
        ('inventory', '0023_operation_not_before'),
        ('provisioning', '0006_operation_in_engine'),
        ('validation', '0007_operation_in_engine'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='operation',
                    name='node',
                ),
                migrations.RemoveField(
                    model_name='operation',
                    name='parent',
                ),
                migrations.RemoveField(
                    model_name='operation',
                    name='rack',
                ),
                migrations.AlterField(
                    model_name='node',
                    name='lock_operation',
                    field=models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='engine.operation'),
                ),
                migrations.AlterField(
                    model_name='importupload',
                    name='operation',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='upload', serialize=False, to='engine.operation'),
                ),
                migrations.AlterField(
                    model_name='lifecycleevent',
                    name='operation',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='engine.operation'),
                ),
                migrations.DeleteModel(
                    name='Worker',
                ),
                migrations.DeleteModel(
                    name='Operation',
                ),
            ],
            database_operations=[migrations.RunPython(rename_content_types, migrations.RunPython.noop)],
        ),
    ]
