from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "inventory"
    site_scopes = {  # inventory.scope: how each model reaches a site
        "site": "pk",
        "rack": "site",
        "node": "rack__site",
        "bmc": "node__rack__site",
        "networkinterface": "node__rack__site",
        "fact": "node__rack__site",
        "lifecycleevent": "node__rack__site",
        "label": "fleet",
        "siterole": "site",
        "importupload": "fleet-only",  # a CSV import needs a fleet-wide role
        # The engine's operations: through their node or rack (scope.operations_in).
        "engine.operation": "inventory.scope.operations_in",
    }
    verbose_name = "Inventory"

    def ready(self) -> None:
        from core.navigation import NavItem
        from core.navigation import register as register_nav
        from engine import plans

        from . import (
            checks,  # noqa: F401  (registers system checks)
            events,
            starting,
            sweeps,
        )

        plans.drive_with(starting.advance)  # every declared plan runs here
        sweeps.register()  # its parts of the engine's sweep
        events.register()  # the webhook event types it sends
        # Its entries in the navigation bar.
        register_nav(NavItem("Nodes", "inventory:node_list", 30))
        register_nav(NavItem("Racks", "inventory:rack_list", 40))
        register_nav(NavItem("Activity", "inventory:activity", 70, id="nav-activity"))
        register_nav(NavItem("Import", "inventory:node_import", 100, capability="write"))
