from django import template
from django.utils.html import format_html

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
def can(user, capability: str) -> bool:
    return _can(user, capability)
