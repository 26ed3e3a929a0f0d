from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Pieces every app may use and that use no app: errors, the registries' bases (event
    types, navigation, doc tables), the state machine, the list page, encrypted fields,
    actor names, strict JSON, the egress policy, idempotent writes."""

    name = "core"
    site_scopes = {  # inventory.scope: fleet-wide plumbing, read by fleet-wide roles only
        "idempotencyrecord": "fleet-only",
        "rotatedtoken": "fleet-only",
    }
    verbose_name = "Core"
