"""Webhook event types: each app registers the ones it sends, with what a receiver gets,
from its `AppConfig.ready()`, so adding an event type touches only the app that sends it.

The outbox refuses any other type (a programming error, never a silent drop), the
subscription API accepts and lists exactly these, and docs/webhooks.md's table of types
is written from them (`manage.py event_types`; a test fails when it is stale).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from .doctables import between


@dataclass(frozen=True)
class EventType:
    name: str
    sent_when: str  # in words, for the docs
    data: str  # the payload's fields, in words (Markdown), for the docs


TYPES: dict[str, EventType] = {}
# The names in the order they were registered (apps in INSTALLED_APPS order). One list
# object for the life of the process, filled in place: the subscription API's schema holds
# it from import time and reads it when the schema is generated.
NAMES: list[str] = []


def register(name: str, sent_when: str, data: str) -> None:
    new = EventType(name, sent_when, data)
    if TYPES.get(name, new) != new:
        raise ImproperlyConfigured(f"webhook event type {name!r} is registered twice")
    if name not in TYPES:
        NAMES.append(name)
    TYPES[name] = new


def register_all(rows: list[tuple[str, str, str]]) -> None:
    """An app's `events.EVENTS` rows: (name, when it is sent, its payload in words)."""
    for name, sent_when, data in rows:
        register(name, sent_when, data)


MARK = "<!-- event_types -->"


def table() -> str:
    rows = ["| type | sent when | `data` |", "|---|---|---|"]
    rows += [f"| `{t.name}` | {t.sent_when} | {t.data} |" for t in TYPES.values()]
    return "\n".join(rows) + "\n"


def refresh(page: str) -> str:
    """`page` with the text between its two MARKs replaced by the current table."""
    return between(page, MARK, table())
