"""Reads of the trail, for the API, the audit page and the panels on object pages."""

from __future__ import annotations

from typing import Any

from auditlog import get_logentry_model
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model, Q, QuerySet

from core.actors import actor_of

from . import registry

ACTIONS = {0: "create", 1: "update", 2: "delete", 3: "access"}
PANEL_SIZE = 20


def entries() -> QuerySet:
    """Every entry, newest first, with what a row shows in the same query."""
    return (
        get_logentry_model()
        .objects.select_related("content_type", "actor")
        .order_by("-timestamp", "-pk")
    )


def for_object(obj: Model) -> QuerySet:
    content_type = ContentType.objects.get_for_model(type(obj))
    return entries().filter(content_type=content_type, object_pk=str(obj.pk))


def latest_for(obj: Model, limit: int = PANEL_SIZE) -> list:
    return list(for_object(obj)[:limit])


def model_label(obj: Model) -> str:
    return f"{obj._meta.app_label}.{obj._meta.model_name}"


def models_named(name: str) -> list[str] | None:
    """The audited models `name` means: `inventory.node`, or `node` (every app's node);
    None if it names none of them."""
    name = name.strip().lower()
    found = [label for label in registry.labels() if name in (label, label.split(".", 1)[1])]
    return found or None


def of_models(labels: list[str]) -> Q:
    q = Q(pk__in=[])
    for label in labels:
        app, model = label.split(".", 1)
        q |= Q(content_type__app_label=app, content_type__model=model)
    return q


def by_actor(name: str) -> Q:
    """Entries by a user, whether through a session or a token: `alice`, or exactly
    `token:alice` / `user:alice` / `system`."""
    name = name.strip()
    if ":" in name or name == "system":
        return Q(additional_data__actor=name)
    return Q(actor__username=name) | Q(additional_data__actor__in=[f"user:{name}", f"token:{name}"])


def actor_name(entry: Any) -> str:
    data = entry.additional_data or {}
    if data.get("actor"):
        return str(data["actor"])
    return actor_of(entry.actor) if entry.actor_id else "system"


def action_name(entry: Any) -> str:
    return ACTIONS.get(entry.action, str(entry.action))


def entry_model(entry: Any) -> str:
    return f"{entry.content_type.app_label}.{entry.content_type.model}"


def change_lines(changes: dict | None) -> list[tuple[str, str, str]]:
    """(field, before, after) per changed field, as a page shows them; a many-to-many
    change reads (field, "", "added: a, b") or (field, "removed: a", "")."""
    lines = []
    for field, change in sorted((changes or {}).items()):
        if isinstance(change, dict):  # auditlog's m2m shape
            names = ", ".join(map(str, change.get("objects", [])))
            if change.get("operation") == "add":
                lines.append((field, "", f"added: {names}"))
            else:
                lines.append((field, f"removed: {names}", ""))
        else:
            before, after = change
            lines.append((field, _text(before), _text(after)))
    return lines


def _text(value: Any) -> str:
    return "" if value is None else str(value)
