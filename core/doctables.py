"""Tables in docs/ that the code writes (vendor quirks, sweep parts): one way to rewrite
the page, so each management command is only its table."""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand


def rewrite(page_name: str, refresh: Callable[[str], str]) -> Path:
    """Rewrite docs/<page_name> through `refresh` (page text -> page text with its table
    brought up to date); the file is only written when something changed."""
    page = Path(settings.BASE_DIR) / "docs" / page_name
    old = page.read_text()
    new = refresh(old)
    if new != old:
        page.write_text(new)
    return page


def between(page: str, mark: str, table: str) -> str:
    """`page` with the text between its two `mark`s replaced by `table`."""
    head, _, rest = page.partition(mark)
    _, _, tail = rest.partition(mark)
    return f"{head}{mark}\n{table}{mark}{tail}"


class TableCommand(BaseCommand):
    """A command that rewrites one generated table of docs/ (`--print`: show it instead).
    A subclass names the page, what the table is, and the two functions of its module."""

    page = ""  # docs/<page>
    what = ""  # "the lifecycle table", for the line it prints
    requires_system_checks: list[str] = []

    def table(self) -> str:
        raise NotImplementedError

    def refresh(self, page: str) -> str:
        raise NotImplementedError

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--print", action="store_true", dest="print_only")

    def handle(self, *args: object, print_only: bool = False, **options: object) -> None:
        if print_only:
            self.stdout.write(self.table(), ending="")
            return
        path = rewrite(self.page, self.refresh)
        self.stdout.write(f"Wrote {self.what} of {path}")
