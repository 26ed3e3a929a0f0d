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
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import (
            events,
            receivers,  # noqa: F401  (phone-home evidence)
        )

        events.register()  # the webhook event types it sends
        # Its panel on the node page.
        register_panel(Panel("node", "attestation", "attestation:node_panel", 30))
