"""The fleet overview composes selectors from every app; it owns no data."""

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import redirect, render

from health import selectors as health_selectors
from inventory import activity, selectors
from inventory.choices import STATE_COLOURS, NodeState
from inventory.permissions import ROLE_CAPABILITIES, VIEW, capabilities
from inventory.scope import readable_sites
from inventory.web import require
from validation import selectors as validation_selectors
from webhooks import selectors as webhook_selectors


@login_required
def overview(request):
    require(request, VIEW)
    # Queues and webhooks are the fleet's plumbing: a site's role sees its own sites only.
    fleet_wide = readable_sites(request.user) is None
    sites, totals = selectors.fleet_overview(request.user)
    states = [(s, label, STATE_COLOURS[s], totals.get(s, 0)) for s, label in NodeState.choices]
    running, running_count = activity.running_now(request.user)
    validating, validating_count = validation_selectors.validating_queue(request.user)
    overdue, overdue_count = selectors.overdue_nodes(request.user)
    return render(
        request,
        "fleet/overview.html",
        {
            "sites": sites,
            "states": states,
            "total": sum(totals.values()),
            "validating": validating,
            "validating_count": validating_count,
            "overdue": overdue,
            "overdue_count": overdue_count,
            "unserved": selectors.unserved_queues() if fleet_wide else [],
            "failing_webhooks": webhook_selectors.failing_subscriptions() if fleet_wide else [],
            "health_breaker": health_selectors.open_breaker(),
            "running": running,
            "running_count": running_count,
            "failures": activity.latest_failures(),
        },
    )


@login_required
def landing(request):
    """Where login sends people (LOGIN_REDIRECT_URL): a manager, who can only look, to the
    dashboards; everyone who works on the fleet to the overview."""
    if capabilities(request.user) == ROLE_CAPABILITIES["manager"]:
        return redirect("reports:dashboards")
    return redirect("fleet:overview")


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request, exception):
    """handler404: under /api/ a JSON `Error` body, as the schema declares for every 404,
    also for paths no view matches (`/api/v1/nodes/a.b/`, an unknown route): a client
    parses one shape. The site keeps Django's HTML page."""
    from django.views.defaults import page_not_found as plain_page_not_found

    if _is_api(request):
        return JsonResponse(
            {"detail": f"Not found: {request.path} matches no API route or object."}, status=404
        )
    return plain_page_not_found(request, exception)


def server_error(request):
    """handler500: a lost database connection is a 503 with Retry-After (for pages, the
    boot front and anything outside DRF), every other error the plain 500 page, or under
    /api/ a JSON `Error` body (a client parses one shape even from a bug)."""
    import sys

    from django.views.defaults import server_error as plain_server_error

    from .exceptions import DATABASE_UNAVAILABLE, RETRY_AFTER_SECONDS, database_unavailable_body

    if isinstance(sys.exc_info()[1], DATABASE_UNAVAILABLE):
        response = JsonResponse(database_unavailable_body(), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    if _is_api(request):
        return JsonResponse(
            {"detail": "Server error: the fault is ours and was logged."}, status=500
        )
    return plain_server_error(request)


def favicon(request):
    """Browsers ask for /favicon.ico whatever the page links: send them to the SVG one
    rather than log a 404 on every first visit."""
    from django.templatetags.static import static

    return redirect(static("favicon.svg"), permanent=True)


def healthz(request):
    """Liveness for load balancers: the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
