from django.apps import AppConfig


class Day2Config(AppConfig):
    """The automated day-2 loop: recycle chains and rolling campaigns (docs/day2.md)."""

    name = "day2"
    site_scopes = {  # inventory.scope: a campaign is a site's when all its nodes are
        "campaign": "every:members:node__rack__site",
        "campaignnode": "node__rack__site",
    }
    verbose_name = "Day 2"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.navigation import NavItem
        from core.navigation import register as register_nav
        from engine import plans, sweep

        from . import actions, campaigns, events, kinds, planning, recycle

        actions.register_actions()  # its node action (inventory/actions.py)
        # Its campaign kind (converge registers its own from its ready()).
        kinds.register(
            kinds.Kind(
                "reimage",
                "Reimage",
                "recycle",
                planning.assess_reimage,
                needs_image=True,
            )
        )
        plans.register(recycle.PLAN)
        # Its operation hears a member's recycle end, and cancels as the campaign does.
        plans.listen(campaigns.KIND, campaigns.heard, cancel=campaigns.cancel_operation)
        sweep.register(
            "day2.campaigns",
            campaigns.sweep,
            "CORRAL_DAY2_SWEEP_SECONDS",
            "Starts each campaign's next nodes and hears how the last ones ended.",
        )
        events.register()  # the webhook event types it sends
        # Its entries in the navigation bar.
        register_nav(NavItem("Campaigns", "day2:campaign_list", 90, id="nav-campaigns"))
