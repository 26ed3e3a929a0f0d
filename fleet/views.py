"""The fleet overview composes selectors from every app; it owns no data."""

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render

from inventory import selectors
from inventory.choices import STATE_COLOURS, NodeState
from inventory.permissions import VIEW
from inventory.views import require
from validation import selectors as validation_selectors


@login_required
def overview(request):
    require(request, VIEW)
    sites, totals = selectors.fleet_overview()
    states = [(s, label, STATE_COLOURS[s], totals.get(s, 0)) for s, label in NodeState.choices]
    return render(
        request,
        "fleet/overview.html",
        {
            "sites": sites,
            "states": states,
            "total": sum(totals.values()),
            "validating": validation_selectors.validating_queue(),
            "unserved": selectors.unserved_queues(),
        },
    )


def healthz(request):
    """Liveness for load balancers: the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
