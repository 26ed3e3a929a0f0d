from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    """Outbound webhooks (docs/webhooks.md): the outbox every app emits events into, in the
    transaction of the change; the subscriptions, their deliveries and pumps; the
    /api/v1/webhooks/ API. Above core, below everything else: every app may emit."""

    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"
    site_scopes = {  # inventory.scope: fleet-wide plumbing, read by fleet-wide roles only
        "webhookevent": "fleet-only",
        "delivery": "fleet-only",
        "webhooksubscription": "fleet-only",
        "webhookaudit": "fleet-only",
    }
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the settings checks)
