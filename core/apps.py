from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Pieces every app may use and that use no app: encrypted fields, actor names, and the
    outbound webhooks (the outbox other apps write events into)."""

    name = "core"
    site_scopes = {  # inventory.scope: fleet-wide plumbing, read by fleet-wide roles only
        "webhookevent": "fleet-only",
        "delivery": "fleet-only",
        "idempotencyrecord": "fleet-only",
        "webhooksubscription": "fleet-only",
        "webhookaudit": "fleet-only",
        "rotatedtoken": "fleet-only",
    }
    verbose_name = "Core"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the settings checks)
