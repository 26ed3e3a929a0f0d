"""The audit page and the Changes panel of object pages (loaded over HTMX, so no app
imports audit). Admins only, as the API (audit/api/views.py says why)."""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from inventory.permissions import ADMIN
from inventory.views import page_links, require

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


@login_required
def entry_list(request):
    """Every change, newest first, filtered as the API is (`?model=&object_id=&actor=&since=`)."""
    require(request, ADMIN)
    filterset = AuditLogFilterSet(request.GET or None, queryset=selectors.entries())
    status = 200
    if filterset.is_bound and not filterset.is_valid():
        entries, status = selectors.entries().none(), 400
    else:
        entries = filterset.qs
    page = Paginator(entries, 50).get_page(request.GET.get("page"))
    context = {
        "filter": filterset,
        "page": page,
        "rows": _rows(page.object_list),
        "links": page_links(page, request.GET),
    }
    return render(request, "audit/entry_list.html", context, status=status)


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
