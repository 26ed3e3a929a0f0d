from django.db import migrations, models


def mark_stateless(apps, schema_editor):
    """Nodes whose last phone-home was with a stateless image run from RAM: every boot of
    theirs is a deploy again (Node.stateless)."""
    Deployment = apps.get_model("provisioning", "Deployment")
    Node = apps.get_model("inventory", "Node")
    last: dict[int, str] = {}
    done = Deployment.objects.filter(status="succeeded", phoned_home__isnull=False)
    for node_id, mode in done.order_by("phoned_home", "pk").values_list(
        "node_id", "image__deploy_mode"
    ):
        last[node_id] = mode
    Node.objects.filter(pk__in=[n for n, mode in last.items() if mode == "stateless"]).update(
        stateless=True
    )


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0028_stateless_reboot"),
        ("provisioning", "0011_node_host_key"),
    ]

    operations = [
        migrations.AddField(
            model_name="deployment",
            name="reboot",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.RunPython(mark_stateless, migrations.RunPython.noop),
    ]
