from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "reports"
    site_scopes = {  # inventory.scope
        "gpuprice": "fleet",
        "daytotal": "site_id",
        "sitedaytotal": "site_id",
        "rackmonthtotal": "site_id",
        "rolledday": "fleet",
        "rackreach": "rack__site",
        "span": "node__rack__site",
        "episode": "node__rack__site",
    }
    verbose_name = "Reports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Inventory never imports reports: reports registers with the lifecycle writer, so
        # a node's spans change in the transaction that changed its state.
        from django.db.models.signals import post_save

        from core.navigation import NavItem
        from core.navigation import register as register_nav
        from inventory.enrolment import nodes_enrolled
        from inventory.lifecycle import on_transition
        from inventory.models import Node

        from . import services

        on_transition("reports.spans", services.record)
        post_save.connect(services.on_node, sender=Node, dispatch_uid="reports.node")
        nodes_enrolled.connect(services.on_enrolled, dispatch_uid="reports.enrolled")
        # Its entries in the navigation bar.
        register_nav(NavItem("Dashboards", "reports:dashboards", 10, id="nav-dashboards"))
