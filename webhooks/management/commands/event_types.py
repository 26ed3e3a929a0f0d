"""``manage.py event_types``: rewrite docs/webhooks.md's table of webhook event types."""

from __future__ import annotations

from core.doctables import TableCommand
from core.events import refresh, table


class Command(TableCommand):
    help = "Rewrite the table of webhook event types in docs/webhooks.md."
    page, what = "webhooks.md", "the table of event types"

    def table(self) -> str:
        return table()

    def refresh(self, page: str) -> str:
        return refresh(page)
