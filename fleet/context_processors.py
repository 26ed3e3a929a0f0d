"""The layout's navigation bar: the entries the apps registered (core.navigation) and the
project's own, those the user may see, each with its URL and, where it has one, its badge
(one COUNT, made only when a page actually draws the bar: an HTMX partial costs nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.module_loading import import_string

from core import navigation
from core.navigation import NavItem
from inventory.permissions import can

# The project's own entries: the fleet overview and the API's documentation.
PROJECT = (NavItem("Fleet", "fleet:overview", 20), NavItem("API", "api-docs", 200))


def items() -> list[NavItem]:
    """Every entry of the bar, the apps' and the project's, in order."""
    return sorted([*navigation.ITEMS.values(), *PROJECT], key=lambda item: item.order)


@dataclass(frozen=True)
class Shown:
    item: NavItem
    url: str
    count: Any  # the badge's count (lazy), or None


def _entries(user: Any) -> list[Shown]:
    shown = []
    for item in items():
        if item.capability and not can(user, item.capability):
            continue
        count = SimpleLazyObject(import_string(item.badge.count)) if item.badge else None
        shown.append(Shown(item, reverse(item.url_name), count))
    return shown


def nav(request: Any) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"nav": SimpleLazyObject(lambda: _entries(user))}
