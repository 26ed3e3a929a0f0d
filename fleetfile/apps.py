from django.apps import AppConfig


class FleetFileConfig(AppConfig):
    """The fleet described as code: files that a plan compares with the fleet and an apply
    writes (docs/fleet-as-code.md). Nothing imports it back."""

    name = "fleetfile"
    verbose_name = "Fleet as code"
    site_scopes = {"fleetapply": "fleet-only"}  # an apply needs a fleet-wide role
