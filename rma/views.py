"""RMA pages: the queue and a case. Permission is checked here, never only in templates."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from inventory.permissions import VIEW, can

from . import selectors
from .filtersets import CaseFilterSet


def require(request, capability: str) -> None:
    if not can(request.user, capability):
        raise PermissionDenied(f"Your role does not allow '{capability}'.")


@login_required
def case_list(request):
    require(request, VIEW)
    filterset = CaseFilterSet(request.GET or None, queryset=selectors.case_queryset())
    page = Paginator(filterset.qs.order_by("sla_due", "id"), 50).get_page(request.GET.get("page"))
    return render(request, "rma/case_list.html", {"filter": filterset, "page": page})


@login_required
def case_detail(request, pk: int):
    require(request, VIEW)
    case = get_object_or_404(selectors.case_queryset(), pk=pk)
    return render(
        request, "rma/case_detail.html", {"case": case, "events": selectors.history(case)}
    )
