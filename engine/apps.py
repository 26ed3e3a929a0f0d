from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The work engine (engine/__init__.py). It sits directly above core; the domain apps
    fill its registry of sweep parts from their own `ready()`."""

    name = "engine"
    site_scopes = {  # inventory.scope
        "sweeppart": "fleet-only",  # fleet-wide plumbing
        # "operation" is inventory's to say (a node's, a rack's, or a fleet-wide import).
        "worker": "fleet-only",
    }
    verbose_name = "Engine"

    def ready(self) -> None:
        from . import workers

        workers.connect()  # worker heartbeats (only a Celery worker sends these signals)
