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
