from django.apps import AppConfig


class ProvisioningConfig(AppConfig):
    name = "provisioning"
    site_scopes = {  # inventory.scope
        "deployment": "node__rack__site",
        "bootrequest": "node__rack__site",  # an unknown MAC's belongs to no site
        "image": "fleet",
        "subnet": "site",
        "biosregistry": "fleet",  # a model's registry, the same at every site
        "nodesensors": "node__rack__site",
        "nodehostkey": "node__rack__site",
        "sensorsample": "node__rack__site",
    }
    verbose_name = "Provisioning"

    def ready(self) -> None:
        from core.navigation import NavItem
        from core.navigation import register as register_nav
        from engine import plans, sweep
        from inventory.lifecycle import on_transition
        from inventory.operations import power_refresh_requested
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import actions, draining, sensors, signals, tasks
        from .plans import deploy_steps

        # A node that leaves deploying has no deployment waiting any more.
        on_transition("provisioning.close_deployment", signals.close_deployment)
        actions.register_actions()  # its node actions (inventory/actions.py)
        # "Read power and health again" on the node page sends the refresher.
        power_refresh_requested.connect(tasks.on_refresh_requested, dispatch_uid="provisioning")
        # A deploy's phases (network boot, power on, phone-home), shown as its steps.
        plans.register_steps("deploy", deploy_steps)

        sweep.register(
            "drains.recheck",
            draining.recheck,
            "CORRAL_DRAIN_RECHECK_SECONDS",
            "Asks the scheduler once about every draining node; ends the drains whose jobs "
            "are gone and says on the others what they still wait for.",
        )
        sweep.register(
            "sensors.prune",
            sensors.prune,
            "CORRAL_SENSOR_PRUNE_SECONDS",
            "Drops the BMC sensor samples older than CORRAL_SENSOR_HISTORY_HOURS.",
        )
        # Its panels on the node page and the rack page.
        register_panel(Panel("node", "boot", "provisioning:node_boot_panel", 20))
        register_panel(Panel("node", "sensors", "provisioning:node_sensors_panel", 25))
        register_panel(Panel("rack", "power", "provisioning:rack_power_panel", 10))
        # Its entries in the navigation bar.
        register_nav(NavItem("Images", "provisioning:image_list", 50))
