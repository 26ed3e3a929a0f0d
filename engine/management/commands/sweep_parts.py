"""``manage.py sweep_parts``: rewrite docs/architecture.md's table of sweep parts."""

from __future__ import annotations

from core.doctables import TableCommand
from engine.sweep import refresh, table


class Command(TableCommand):
    help = "Rewrite the table of the engine's sweep parts in docs/architecture.md."
    page, what = "architecture.md", "the table of sweep parts"

    def table(self) -> str:
        return table()

    def refresh(self, page: str) -> str:
        return refresh(page)
