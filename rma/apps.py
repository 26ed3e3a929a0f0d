from django.apps import AppConfig


class RmaConfig(AppConfig):
    name = "rma"
    site_scopes = {  # inventory.scope
        "case": "node__rack__site",
        "part": "case__node__rack__site",
        "caseevent": "case__node__rack__site",
    }
    verbose_name = "RMA"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.navigation import Badge, NavItem
        from core.navigation import register as register_nav
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import actions, events

        actions.register_actions()  # its node actions (inventory/actions.py)
        events.register()  # the webhook event types it sends
        # Its panel on the node page.
        register_panel(Panel("node", "rma", "rma:node_cases", 40))
        # Its entries in the navigation bar.
        register_nav(
            NavItem(
                "RMA",
                "rma:case_list",
                60,
                id="nav-rma",
                capability="view",
                badge=Badge("rma.selectors.open_count", "rma-open-count", "open RMA cases"),
            )
        )
