"""The node page's Cancel button: the same rule as POST /api/v1/operations/{id}/cancel/
(inventory/cancelling.py), answered as the node page's live panel."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from . import cancelling, selectors
from .actions import label_of
from .models import Operation
from .permissions import ACT, actor_of
from .scope import visible_or_404
from .services import CannotCancel
from .views import node_context
from .web import require


@login_required
@require_POST
def operation_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    op = get_object_or_404(Operation, pk=pk, node__isnull=False)
    node = visible_or_404(request.user, selectors.node_detail_queryset(), pk=op.node_id)
    require(request, ACT, on=node)
    try:
        op = cancelling.cancel_operation(op, actor_of(request.user))
        messages.success(request, f"{label_of(op.kind)} cancelled: {op.error}")
    except CannotCancel as exc:
        messages.error(request, str(exc))
    if not getattr(request, "htmx", False):
        return redirect(node)
    node = visible_or_404(request.user, selectors.node_detail_queryset(), pk=node.pk)
    return render(request, "inventory/node_detail.html#node-live", node_context(request, node))
