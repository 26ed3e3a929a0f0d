from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The work engine (engine/__init__.py). It sits directly above core; the domain apps
    fill its registry of sweep parts from their own `ready()`."""

    name = "engine"
    site_scopes = {"sweeppart": "fleet-only"}  # inventory.scope: fleet-wide plumbing
    verbose_name = "Engine"
