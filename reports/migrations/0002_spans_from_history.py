"""Spans and episodes for the history that predates the reports app."""

from django.db import migrations


def forwards(apps, schema_editor):
    from reports.services import replay

    replay(
        apps.get_model("inventory", "Node"),
        apps.get_model("inventory", "LifecycleEvent"),
        apps.get_model("reports", "Span"),
        apps.get_model("reports", "Episode"),
    )


class Migration(migrations.Migration):
    dependencies = [("reports", "0001_initial"), ("inventory", "0013_rack_delivered")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
