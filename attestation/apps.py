from django.apps import AppConfig


class AttestationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "attestation"
    site_scopes = {  # inventory.scope
        "attestation": "node__rack__site",
        "tpmidentity": "node__rack__site",
        "firmwarereference": "fleet",
    }
    verbose_name = "Attestation"

    def ready(self) -> None:
        from . import (
            events,
            receivers,  # noqa: F401  (phone-home evidence)
        )

        events.register()  # the webhook event types it sends
