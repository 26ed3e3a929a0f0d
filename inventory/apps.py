from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = "Inventory"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers system checks)
            workers,
        )

        workers.connect()  # worker heartbeats (only a Celery worker sends these signals)
