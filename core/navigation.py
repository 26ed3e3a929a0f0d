"""The navigation bar's entries, registered by the apps whose pages they lead to (from
their `ready()`), so the layout template names no app: adding a page to the bar touches
only its app. fleet's context processor draws the entries a user may see, in `order`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class Badge:
    """A count shown beside the entry (open RMA cases), read only when a page is drawn."""

    count: str  # dotted path of a function() -> int
    id: str
    title: str


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str
    order: int
    id: str = ""  # the link's id (tests and the browser walk click by it)
    capability: str = ""  # shown only to whoever holds this fleet-wide ("": every user)
    badge: Badge | None = None


ITEMS: dict[str, NavItem] = {}


def register(item: NavItem) -> None:
    if ITEMS.get(item.url_name, item) != item:
        raise ImproperlyConfigured(f"a navigation entry for {item.url_name!r} is registered twice")
    ITEMS[item.url_name] = item
