from django.apps import AppConfig


class Day2Config(AppConfig):
    """The automated day-2 loop: recycle chains and rolling campaigns (docs/day2.md)."""

    name = "day2"
    verbose_name = "Day 2"
    default_auto_field = "django.db.models.BigAutoField"
