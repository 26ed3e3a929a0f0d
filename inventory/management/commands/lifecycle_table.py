"""``manage.py lifecycle_table``: rewrite docs/architecture.md's lifecycle table."""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand

from core.doctables import rewrite
from inventory.lifecycle import refresh, table


class Command(BaseCommand):
    help = "Rewrite the node lifecycle's transition table in docs/architecture.md."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--print", action="store_true", dest="print_only")

    def handle(self, *args: object, print_only: bool = False, **options: object) -> None:
        if print_only:
            self.stdout.write(table(), ending="")
            return
        page = rewrite("architecture.md", refresh)
        self.stdout.write(f"Wrote the lifecycle table of {page}")
