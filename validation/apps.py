from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    site_scopes = {  # inventory.scope
        "gateprofile": "fleet",
        "gaterun": "node__rack__site",
        "checkresult": "run__node__rack__site",
        "nodehostkey": "node__rack__site",
    }
    verbose_name = "Validation"
