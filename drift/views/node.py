"""The node page's drift panel, loaded over HTMX (inventory does not import drift)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from inventory.models import Node
from inventory.permissions import VIEW
from inventory.scope import visible_or_404

from .. import selectors
from . import require


@login_required
def node_panel(request, node_pk: int):
    require(request, VIEW)
    node = visible_or_404(request.user, Node, pk=node_pk)
    context = {"node": node, **selectors.node_drift(node)}
    return render(request, "drift/_node_panel.html", context)
