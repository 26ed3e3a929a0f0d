"""The RMA queue (filters, sort, paging, a table that refreshes itself, bulk assign) and
the node page's RMA panel."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from inventory.models import Node
from inventory.permissions import ACT, VIEW, actor_of, can_somewhere
from inventory.scope import restrict, visible_or_404
from inventory.web import ScopedList

from .. import selectors, services
from ..filtersets import CaseFilterSet
from ..forms import BulkAssignForm
from . import require, require_somewhere


def _filter_data(params: QueryDict) -> QueryDict:
    """The queue shows open cases unless the person asked for a status (which wins over
    "Show") or for closed/all cases (`open=` empty means all)."""
    data = params.copy()
    for key in ("status", "priority"):  # the form's "any" sends an empty value
        data.setlist(key, [v for v in data.getlist(key) if v])
    if data.get("status"):
        # A chosen status says which cases; "Show: open" beside it would only empty the list.
        data.pop("open", None)
    elif "open" not in data:
        data["open"] = "true"
    return data


class CaseList(ScopedList):
    """The queue: filters, sort by a column, 50 to a page, a table that refreshes itself,
    and the bulk-assign select for who may act."""

    template_name = "rma/case_list.html"
    partial = "case-table"
    filterset_class = CaseFilterSet
    rows_name = "cases"
    sort_param = "sort"
    columns = tuple((key, key) for key in ("priority", "opened", "sla_due", "status", "updated"))

    def rows_of(self, request):
        # The queue shows no parts: drop the shared queryset's prefetch of them.
        return selectors.case_queryset().prefetch_related(None)

    def filter_data(self, params):
        return _filter_data(params)

    def sort(self, rows, params):
        return selectors.sorted_cases(rows, params.get("sort", ""))

    def more_context(self, request, page):
        can_act = can_somewhere(request.user, ACT)
        context = {
            "querystring": request.GET.urlencode(),
            "show": _filter_data(request.GET).get("open", ""),
            "can_act": can_act,
            # the bulk-assign select lives in the table region
            "users": selectors.assignable_users() if can_act else [],
        }
        if not (request.htmx and not request.htmx.boosted):  # the whole page
            context["sites"] = restrict(selectors.sites(), request.user)
            # the same queryset as the bulk-assign select's: read once
            context["all_users"] = context["users"] or selectors.assignable_users()
        return context


case_list = CaseList.as_view()


@login_required
@require_POST
def case_assign(request):
    """Bulk assign from the queue; answers with the table (same filters, sort and page)."""
    require_somewhere(request, ACT)  # and each case below
    form = BulkAssignForm(request.POST)
    if form.is_valid():
        cases = list(form.cleaned_data["cases"].select_related("node__rack"))
        for case in cases:
            require(request, ACT, on=case)
        user = form.cleaned_data["assignee"]
        changed = services.assign([c.pk for c in cases], user.pk, actor_of(request.user))
        messages.success(
            request,
            f"{len(cases)} case{'s' if len(cases) != 1 else ''} assigned to "
            f"{user.get_username()} ({changed} changed).",
        )
    else:
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    if not request.htmx:
        return redirect(f"{reverse('rma:case_list')}?{request.GET.urlencode()}")
    context, _ = CaseList().page_context(request)
    return render(request, "rma/case_list.html#case-table", context)


@login_required
def node_cases(request, node_pk: int):
    """The node page's RMA panel, loaded over HTMX (inventory does not import rma)."""
    require(request, VIEW)
    node = visible_or_404(request.user, Node, pk=node_pk)
    cases = list(selectors.cases_of_node(node.pk))
    current = next((c for c in cases if c.is_open), None)
    context = {
        "node": node,
        "current": current,
        "past": [c for c in cases if c is not current],
    }
    return render(request, "rma/_node_cases.html", context)
