from django.apps import AppConfig


class ConvergeConfig(AppConfig):
    """Bringing nodes to their baseline: BIOS settings today, firmware next
    (docs/converge.md)."""

    name = "converge"
    site_scopes: dict[str, str] = {}  # inventory.scope: no models of its own yet
    verbose_name = "Converge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from engine import plans

        from . import actions, plan

        actions.register_actions()  # its node actions (inventory/actions.py)
        plans.register(plan.PLAN)
