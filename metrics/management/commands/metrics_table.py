"""``manage.py metrics_table``: rewrite docs/metrics.md's table of metrics."""

from __future__ import annotations

from core.doctables import TableCommand
from metrics.doctable import refresh, table


class Command(TableCommand):
    help = "Rewrite the table of metrics in docs/metrics.md."
    page, what = "metrics.md", "the table of metrics"

    def table(self) -> str:
        return table()

    def refresh(self, page: str) -> str:
        return refresh(page)
