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
        from . import signals  # noqa: F401  (connects the deployment receivers)
