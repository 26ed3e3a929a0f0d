"""Status colours of drift cells, in one place for the matrix, the skew page and the panel."""

from django import template
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince

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


def _title(cell) -> str:
    seen = (
        f"{timezone.localtime(cell.observed_at):%Y-%m-%d %H:%M} ({timesince(cell.observed_at)} ago)"
        if cell.observed_at
        else "never observed"
    )
    lines = [f"expected {cell.expected}", f"{cell.source or 'no source'}, {seen}"]
    lines += [
        f"GPU {g['gpu']}: {g['observed'] or '?'} ({g['status']})"
        for g in cell.gpus
        if g["status"] != "ok"
    ]
    return "\n".join(lines)


@register.simple_tag
def drift_cells(row, url: str):
    """A matrix row's cells, rendered in Python: 50 rows x 30 components is 1,500 cells,
    which as template nodes cost most of the page's time (docs/drift.md, bench-drift)."""
    return format_html_join(
        "",
        "{}",
        (
            (
                format_html(
                    '<td class="cell {}" data-status="{}" data-component="{}" title="{}">'
                    '<a href="{}">{}</a></td>',
                    CELL_CLASSES.get(cell.status, ""),
                    cell.status,
                    cell.component,
                    _title(cell),
                    url,
                    cell.observed or "unknown",
                )
                if cell
                else format_html('<td class="cell text-body-tertiary" data-status="none">·</td>'),
            )
            for cell in row.cells
        ),
    )
