from django.apps import AppConfig


class ConvergeConfig(AppConfig):
    """Bringing nodes to their baseline: firmware from artifacts, BIOS settings, one node
    or a campaign of many (docs/converge.md)."""

    name = "converge"
    # inventory.scope: one repository, and baselines are fleet-wide
    site_scopes = {"firmwareartifact": "fleet", "baselineartifact": "fleet"}
    verbose_name = "Converge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from day2 import kinds
        from engine import plans
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import actions, campaign, events, plan

        actions.register_actions()  # its node actions (inventory/actions.py)
        plans.register(plan.PLAN)
        # Many nodes at a time: a campaign kind, paced like a rolling reimage.
        kinds.register(kinds.Kind("converge", "Converge", "converge", campaign.assess))
        events.register()  # the webhook event types it sends
        # On a baseline's page: the package each firmware component is flashed from.
        register_panel(Panel("baseline", "artifacts", "converge:baseline_panel", 10, reloads=False))
