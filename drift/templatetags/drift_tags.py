"""Status colours of drift cells, in one place for the matrix, the skew page and the panel."""

from django import template
from django.utils.html import format_html

register = template.Library()

# Bootstrap table-row classes (cells) and badge colours, per shown status.
CELL_CLASSES = {
    "ok": "table-success",
    "drift": "table-danger",
    "unknown": "table-secondary",
    "stale": "table-warning",
}
BADGE_COLOURS = {"ok": "success", "drift": "danger", "unknown": "secondary", "stale": "warning"}


@register.filter
def cell_class(status: str) -> str:
    return CELL_CLASSES.get(status, "")


@register.simple_tag
def status_badge(status: str):
    return format_html(
        '<span class="badge text-bg-{} status" data-status="{}">{}</span>',
        BADGE_COLOURS.get(status, "secondary"),
        status,
        status,
    )
