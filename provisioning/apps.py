from django.apps import AppConfig


class ProvisioningConfig(AppConfig):
    name = "provisioning"
    site_scopes = {  # inventory.scope
        "deployment": "node__rack__site",
        "bootrequest": "node__rack__site",  # an unknown MAC's belongs to no site
        "image": "fleet",
        "subnet": "site",
    }
    verbose_name = "Provisioning"

    def ready(self) -> None:
        from engine import plans, sweep

        from . import (
            draining,
            signals,  # noqa: F401  (connects the deployment receivers)
        )
        from .plans import deploy_steps, deploy_steps_many

        plans.register_steps(
            "deploy", deploy_steps, many=deploy_steps_many
        )  # its phases, shown as steps

        sweep.register(
            "drains.recheck",
            draining.recheck,
            "CORRAL_DRAIN_RECHECK_SECONDS",
            "Asks the scheduler once about every draining node; ends the drains whose jobs "
            "are gone and says on the others what they still wait for.",
        )
