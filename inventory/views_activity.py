"""The Activity page: what ran across the fleet and what changed state, newest first, so a
shift lead sees the night's work and its failures with their reasons.

Filters are the API's (inventory.filtersets via inventory.activity); HTMX swaps the table
while typing and `hx-push-url` keeps the filtered page shareable."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils import timezone

from . import activity
from .choices import OperationStatus
from .filtersets import LAST_WINDOWS
from .permissions import VIEW
from .web import require


@login_required
def activity_list(request):
    require(request, VIEW)
    tl = activity.timeline(request.GET, request.user)
    page, rows = activity.page_of(tl, request.GET.get("page"))
    now = timezone.now()
    for row in rows:
        if row.is_operation:
            row.obj.duration = activity.duration(row.obj, now)
    context = {
        "timeline": tl,
        "form": tl.operations.form,
        "page": page,
        "rows": rows,
        "statuses": OperationStatus.choices,
        "chosen_statuses": request.GET.getlist("status"),
        "windows": list(LAST_WINDOWS),
        "shows": activity.SHOW,
        "kinds": activity.kinds(),
    }
    template = "inventory/activity.html"
    if request.htmx and not request.htmx.boosted:
        template += "#activity-table"
    return render(request, template, context)
