"""The rack page's panel: the rack's slots by tray, and whether it is ready as a whole."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from inventory.models import Rack
from inventory.permissions import VIEW
from inventory.scope import visible_or_404
from inventory.web import require

from . import selectors
from .models import RackLayout


@login_required
def rack_panel(request: HttpRequest, pk: int) -> HttpResponse:
    rack = visible_or_404(request.user, Rack.objects.select_related("site"), pk=pk)
    require(request, VIEW, on=rack)
    layout = RackLayout.objects.filter(rack=rack).select_related("template").first()
    rows = selectors.slot_rows(layout) if layout is not None else []
    return render(request, "trays/_rack_panel.html", {"layout": layout, "rows": rows})
