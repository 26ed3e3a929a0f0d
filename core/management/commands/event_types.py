"""``manage.py event_types``: rewrite docs/webhooks.md's table of webhook event types."""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand

from core.doctables import rewrite
from core.events import refresh, table


class Command(BaseCommand):
    help = "Rewrite the table of webhook event types in docs/webhooks.md."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--print", action="store_true", dest="print_only")

    def handle(self, *args: object, print_only: bool = False, **options: object) -> None:
        if print_only:
            self.stdout.write(table(), ending="")
            return
        page = rewrite("webhooks.md", refresh)
        self.stdout.write(f"Wrote the table of event types of {page}")
