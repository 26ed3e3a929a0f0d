from django.apps import AppConfig


class DriftConfig(AppConfig):
    name = "drift"
    site_scopes = {  # inventory.scope
        "baseline": "fleet",
        "baselinerevision": "fleet",
        "driftcell": "node__rack__site",
        "nodedrift": "node__rack__site",
        "driftevent": "node__rack__site",
    }
    verbose_name = "Drift"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Inventory never imports drift: it announces facts and drift listens, so the
        # cells are updated in the transaction that stored the facts.
        from core.navigation import NavItem
        from core.navigation import register as register_nav
        from inventory.facts import facts_recorded
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import events, services

        facts_recorded.connect(services.on_facts, dispatch_uid="drift.on_facts")
        events.register()  # the webhook event types it sends
        # Its panel on the node page.
        register_panel(Panel("node", "drift", "drift:node_panel", 50))
        # Its entries in the navigation bar.
        register_nav(NavItem("Drift", "drift:matrix", 80, id="nav-drift"))
