import json
from pathlib import Path

from django.db import migrations

PROFILE = Path(__file__).resolve().parent.parent / "profiles" / "hgx_h100_h200.json"


def load_default(apps, schema_editor):
    GateProfile = apps.get_model("validation", "GateProfile")
    spec = json.loads(PROFILE.read_text())
    if not GateProfile.objects.filter(name=spec["name"]).exists():
        GateProfile.objects.create(name=spec["name"], spec=spec,
                                   is_default=not GateProfile.objects.filter(
                                       is_default=True).exists())


class Migration(migrations.Migration):
    dependencies = [("validation", "0001_initial")]
    operations = [migrations.RunPython(load_default, migrations.RunPython.noop)]
