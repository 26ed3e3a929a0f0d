"""A default policy row for a GPU the BMC reports over its temperature limit
(provisioning.sensors, health.services.on_gpu_too_hot): recycle at once, which drains the
node first, and whose gates' burn-in judges its cooling. Admins change it like any other
row."""

from django.db import migrations

ROW = {
    "priority": 290,
    "kind": "thermal",
    "match": "gpu_over_temperature",
    "action": "recycle",
    "note": "A GPU over CORRAL_GPU_TEMPERATURE_LIMIT_C on the BMC's own sensor: drain it "
    "before it slows or faults under a job; the recycle's gates (burn-in) judge the cooling.",
}


def seed(apps, schema_editor):
    HealthPolicy = apps.get_model("health", "HealthPolicy")
    HealthPolicy.objects.get_or_create(
        priority=ROW["priority"], kind=ROW["kind"], match=ROW["match"], defaults=ROW
    )


def unseed(apps, schema_editor):
    HealthPolicy = apps.get_model("health", "HealthPolicy")
    HealthPolicy.objects.filter(priority=ROW["priority"], kind=ROW["kind"], match=ROW["match"]).delete()


class Migration(migrations.Migration):
    dependencies = [("health", "0004_operation_in_engine")]

    operations = [migrations.RunPython(seed, unseed)]
