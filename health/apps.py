from django.apps import AppConfig


class HealthConfig(AppConfig):
    name = "health"
    site_scopes = {  # inventory.scope
        "breakerstate": "fleet",
        "healthevent": "node__rack__site",
        "healthpolicy": "fleet",
    }
    verbose_name = "Health"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # provisioning never imports health: its power/health refresher announces a BMC
        # health change with a signal, and the policy listens (docs/health.md).
        from inventory.panels import Panel
        from inventory.panels import register as register_panel
        from provisioning.signals import bmc_health_changed, gpu_too_hot

        from . import events, services

        bmc_health_changed.connect(services.on_bmc_health, dispatch_uid="health.on_bmc_health")
        gpu_too_hot.connect(services.on_gpu_too_hot, dispatch_uid="health.on_gpu_too_hot")
        events.register()  # the webhook event types it sends
        # Its panel on the node page.
        register_panel(Panel("node", "health", "health:node_panel", 60))
