"""Tables in docs/ that the code writes (vendor quirks, sweep parts): one way to rewrite
the page, so each management command is only its table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django.conf import settings


def rewrite(page_name: str, refresh: Callable[[str], str]) -> Path:
    """Rewrite docs/<page_name> through `refresh` (page text -> page text with its table
    brought up to date); the file is only written when something changed."""
    page = Path(settings.BASE_DIR) / "docs" / page_name
    old = page.read_text()
    new = refresh(old)
    if new != old:
        page.write_text(new)
    return page
