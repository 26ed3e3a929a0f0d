"""The templates Corral ships (trays.builtin): gb200-nvl72."""

from django.db import migrations


def create(apps, schema_editor):
    from trays.builtin import BUILTIN

    RackTemplate = apps.get_model("trays", "RackTemplate")
    Slot = apps.get_model("trays", "Slot")
    for name, spec in BUILTIN.items():
        template, made = RackTemplate.objects.get_or_create(
            name=name,
            defaults={
                "description": spec["description"],
                "u_height": spec["u_height"],
                "created_by": "system",
            },
        )
        if made:
            Slot.objects.bulk_create(
                [
                    Slot(template=template, **{**slot, "role": str(slot["role"])})
                    for slot in spec["slots"]()
                ]
            )


def remove(apps, schema_editor):
    from trays.builtin import BUILTIN

    RackTemplate = apps.get_model("trays", "RackTemplate")
    RackTemplate.objects.filter(name__in=list(BUILTIN), racks__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("trays", "0001_initial")]

    operations = [migrations.RunPython(create, remove)]
