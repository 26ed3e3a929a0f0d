"""``manage.py sweep_parts``: rewrite docs/architecture.md's table of sweep parts."""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand

from core.doctables import rewrite
from engine.sweep import refresh, table


class Command(BaseCommand):
    help = "Rewrite the table of the engine's sweep parts in docs/architecture.md."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--print", action="store_true", dest="print_only")

    def handle(self, *args: object, print_only: bool = False, **options: object) -> None:
        if print_only:
            self.stdout.write(table(), ending="")
            return
        page = rewrite("architecture.md", refresh)
        self.stdout.write(f"Wrote the table of sweep parts of {page}")
