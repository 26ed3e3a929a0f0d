from django.apps import AppConfig


class ConvergeConfig(AppConfig):
    """Bringing nodes to their baseline: BIOS settings, firmware artifacts; firmware
    updates next (docs/converge.md)."""

    name = "converge"
    site_scopes = {"firmwareartifact": "fleet"}  # inventory.scope: one repository
    verbose_name = "Converge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from engine import plans

        from . import actions, events, plan

        actions.register_actions()  # its node actions (inventory/actions.py)
        plans.register(plan.PLAN)
        events.register()  # the webhook event types it sends
