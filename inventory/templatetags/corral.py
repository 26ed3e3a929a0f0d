from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.html import format_html

from inventory import panels
from inventory.actions import label_of
from inventory.choices import POWER_COLOURS, STATE_COLOURS, NodeState
from inventory.permissions import can as _can

register = template.Library()
_LABELS = dict(NodeState.choices)


@register.simple_tag
def state_badge(state: str):
    return format_html(
        '<span class="badge text-bg-{} state-badge" data-state="{}">{}</span>',
        STATE_COLOURS.get(state, "secondary"),
        state,
        _LABELS.get(state, state),
    )


@register.simple_tag
def power_badge(state: str):
    colour = POWER_COLOURS.get(state, "light")
    return format_html('<span class="badge text-bg-{} border">{}</span>', colour, state or "?")


@register.filter
def action_label(kind: str) -> str:
    """`{{ op.kind|action_label }}`: "Power on" where people read, `power_on` left to the
    API, filters and links (inventory.actions.label_of)."""
    return label_of(kind or "")


@register.filter
def can(user, capability: str) -> bool:
    return _can(user, capability)


@register.simple_tag(takes_context=True)
def page_panels(context, page: str, obj):
    """`{% page_panels "node" node as panels %}`: the other apps' panels for this page
    (inventory.panels), those the viewer may see, with their URLs."""
    user = context["user"]
    return panels.slots(page, obj, lambda capability: _can(user, capability))


def _absolute(value: datetime, seconds: bool = False) -> str:
    local = timezone.localtime(value)
    return f"{local:%Y-%m-%d %H:%M{':%S' if seconds else ''}} {local.tzname()}"


@register.filter
def when(value: datetime | None, style: str = "") -> str:
    """A time with its zone ("2026-11-23 05:40 UTC"), `|when:"s"` with seconds; `|when:"ago"`
    says it relative to now ("3 min ago") with the absolute time in the title. Every page
    shows times this way, so a technician in another zone never guesses which one it is."""
    if not value:
        return ""
    if not isinstance(value, datetime):
        return str(value)
    absolute = _absolute(value, seconds=style == "s")
    if style != "ago":
        return format_html('<time datetime="{}">{}</time>', value.isoformat(), absolute)
    return format_html(
        '<time datetime="{}" title="{}">{}</time>', value.isoformat(), absolute, ago(value)
    )


def ago(value: datetime, now: datetime | None = None) -> str:
    seconds = int(((now or timezone.now()) - value).total_seconds())
    future, seconds = seconds < 0, abs(seconds)
    if seconds < 60:
        text = f"{seconds} s"
    elif seconds < 3600:
        text = f"{seconds // 60} min"
    elif seconds < 86400:
        text = f"{seconds // 3600} h {seconds % 3600 // 60} min"
    else:
        text = f"{seconds // 86400} d {seconds % 86400 // 3600} h"
    return f"in {text}" if future else f"{text} ago"


@register.filter
def duration(value: timedelta | int | None) -> str:
    """A run's length (a timedelta, or seconds): "42 s", "3 min 12 s", "2 h 05 min"."""
    if value is None:
        return ""
    seconds = int(value if isinstance(value, int) else value.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


ALERT_CLASSES = {"debug": "secondary", "info": "info", "success": "success"}
ALERT_CLASSES |= {"warning": "warning", "error": "danger"}


@register.filter
def alert_class(message) -> str:
    """The Bootstrap alert colour of a message's level: only errors are red."""
    return ALERT_CLASSES.get(getattr(message, "level_tag", ""), "info")


@register.simple_tag(takes_context=True)
def unshown_messages(context) -> list:
    """The request's messages for the first loop of a response that asks, none after it.
    base.html shows them, and so does a live partial a page includes (for its HTMX
    refreshes, when base.html is not rendered); Django's storage hands the same messages
    to every loop in a request, so a full page showed each one twice. Rendered without a
    request (no view), there is no response to remember it in: they are shown."""
    request = context.get("request")
    if getattr(request, "_corral_messages_shown", False):
        return []
    if request is not None:
        request._corral_messages_shown = True
    return list(context.get("messages", ()))
