"""The second half of moving the webhook models to their own app (webhooks 0001): they
leave core's state. Nothing changes in the database."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0003_rotatedtoken'),
        ('webhooks', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='delivery',
                    name='event',
                ),
                migrations.RemoveField(
                    model_name='delivery',
                    name='subscription',
                ),
                migrations.DeleteModel(
                    name='WebhookAudit',
                ),
                migrations.DeleteModel(
                    name='WebhookEvent',
                ),
                migrations.DeleteModel(
                    name='Delivery',
                ),
                migrations.DeleteModel(
                    name='WebhookSubscription',
                ),
            ],
        ),
    ]
