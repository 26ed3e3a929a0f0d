from django.apps import AppConfig


class TraysConfig(AppConfig):
    """Racks built as one unit (a GB200 NVL72): templates of slots, trays that fill them,
    and whether the rack is ready as a whole (docs/racks.md)."""

    name = "trays"
    site_scopes = {  # inventory.scope
        "racktemplate": "fleet",
        "slot": "fleet",
        "racklayout": "rack__site",
        "tray": "layout__rack__site",
    }
    verbose_name = "Rack templates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from inventory.lifecycle import on_transition
        from inventory.panels import Panel
        from inventory.panels import register as register_panel
        from provisioning.signals import bmc_health_changed

        from . import events, readiness

        events.register()
        on_transition("trays.readiness", readiness.on_transition)
        bmc_health_changed.connect(readiness.on_bmc_health, dispatch_uid="trays.readiness")
        # On a rack's page: its slots, their trays and what the rack waits for.
        register_panel(Panel("rack", "trays", "trays:rack_panel", 5))
