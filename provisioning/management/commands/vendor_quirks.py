"""``manage.py vendor_quirks``: rewrite docs/inspection.md's vendor quirk table from the code."""

from __future__ import annotations

from core.doctables import TableCommand
from provisioning.drivers.redfish.vendors.doc import quirk_table as table
from provisioning.drivers.redfish.vendors.doc import refresh


class Command(TableCommand):
    help = "Rewrite the vendor quirk table of docs/inspection.md from the Redfish vendor profiles."
    page, what = "inspection.md", "the vendor quirk table"

    def table(self) -> str:
        return table()

    def refresh(self, page: str) -> str:
        return refresh(page)
