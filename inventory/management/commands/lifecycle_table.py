"""``manage.py lifecycle_table``: rewrite docs/architecture.md's lifecycle table."""

from __future__ import annotations

from core.doctables import TableCommand
from inventory.lifecycle import refresh, table


class Command(TableCommand):
    help = "Rewrite the node lifecycle's transition table in docs/architecture.md."
    page, what = "architecture.md", "the lifecycle table"

    def table(self) -> str:
        return table()

    def refresh(self, page: str) -> str:
        return refresh(page)
