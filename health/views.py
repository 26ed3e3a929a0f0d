"""The node page's health panel, loaded over HTMX (inventory does not import health)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from inventory.models import Node
from inventory.permissions import VIEW
from inventory.scope import visible_or_404
from inventory.web import require

from . import selectors


@login_required
def node_panel(request, node_pk: int):
    require(request, VIEW)
    node = visible_or_404(request.user, Node, pk=node_pk)
    context = {
        "node": node,
        "events": selectors.node_events(node.pk),
        "breaker": selectors.open_breaker(),
    }
    return render(request, "health/_node_panel.html", context)
