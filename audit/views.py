"""The audit page and the Changes panel of object pages (loaded over HTMX, so no app
imports audit). Admins only, as the API (audit/api/views.py says why)."""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from core.web import ListPage
from inventory.permissions import ADMIN
from inventory.web import require

from . import registry, selectors
from .filtersets import AuditLogFilterSet


def _rows(entries) -> list[dict]:
    return [
        {
            "entry": e,
            "actor": selectors.actor_name(e),
            "action": selectors.action_name(e),
            "model": selectors.entry_model(e),
            "changes": selectors.change_lines(e.changes),
        }
        for e in entries
    ]


class EntryList(ListPage):
    """Every change, newest first, filtered as the API is (`?model=&object_id=&actor=&since=`);
    a filter it cannot read is a 400 with no rows, as the API's."""

    template_name = "audit/entry_list.html"
    filterset_class = AuditLogFilterSet
    refused_filter_status = 400

    def check(self, request):
        require(request, ADMIN)

    def queryset(self, request):
        return selectors.entries()

    def rows(self, page):
        return _rows(page.object_list)


entry_list = EntryList.as_view()


@login_required
def changes_panel(request, label: str, pk: int):
    """The latest changes of one object, for its page."""
    require(request, ADMIN)
    if label not in registry.labels():
        raise Http404(f"{label} is not audited")
    obj = get_object_or_404(apps.get_model(label), pk=pk)
    context = {
        "rows": _rows(selectors.latest_for(obj)),
        "label": label,
        "object_id": pk,
        "size": selectors.PANEL_SIZE,
    }
    return render(request, "audit/_changes.html", context)
