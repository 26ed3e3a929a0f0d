from django.apps import AppConfig


class ConsolesConfig(AppConfig):
    """A machine's serial console through its BMC: recorded while the machine deploys or
    runs its gates, its last lines on the node page (docs/console.md)."""

    name = "consoles"
    site_scopes = {
        "consolelog": "node__rack__site",
        "consolechunk": "log__node__rack__site",
        "consolesession": "node__rack__site",
    }
    verbose_name = "Consoles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from celery.signals import worker_shutting_down

        from inventory.lifecycle import on_transition
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import hooks, relay

        on_transition("consoles.record", hooks.on_transition)
        worker_shutting_down.connect(lambda **_: relay.SHUTDOWN.set(), weak=False)
        # On a node's page: the last lines of its console, as it last deployed or ran gates.
        register_panel(Panel("node", "console", "consoles:node_panel", 15))
