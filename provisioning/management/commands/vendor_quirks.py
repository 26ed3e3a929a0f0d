"""``manage.py vendor_quirks``: rewrite docs/inspection.md's vendor quirk table from the code."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from core.doctables import rewrite
from provisioning.drivers.redfish.vendors.doc import quirk_table, refresh


class Command(BaseCommand):
    help = "Rewrite the vendor quirk table of docs/inspection.md from the Redfish vendor profiles."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--print", action="store_true", dest="print_only")

    def handle(self, *args, print_only, **options):
        if print_only:
            self.stdout.write(quirk_table(), ending="")
            return
        page = rewrite("inspection.md", refresh)
        self.stdout.write(f"Wrote the vendor quirk table of {page}")
