"""Dashboard pages. HTMX requests get the partial they swap; permission is checked here,
never only in templates."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import DomainConflict
from core.text import plural

from . import bulk, bulk_bar, import_operations, imports, operations, selectors, services
from .actions import ACTIONS, available_actions, label_of
from .cancelling import offers_cancel
from .choices import TRANSITIONAL_STATES, NodeState, OperationStatus
from .filtersets import NodeFilterSet
from .forms import ActionForm, ImportForm
from .models import Rack
from .permissions import (
    ACT,
    ADMIN,
    VIEW,
    WRITE,
    actor_of,
    can,
    site_of,
    sites_where,
)
from .scope import visible_or_404
from .web import ScopedDetail, ScopedList, require


class NodeList(ScopedList):
    """The nodes, filtered as /api/v1/nodes/ is (NodeFilterSet), sorted by a column, 100
    to a page, with the bulk bar for who may act."""

    template_name = "inventory/node_list.html"
    partial = "node-table"
    filterset_class = NodeFilterSet
    paginate_by = 100
    rows_name = "nodes"
    sort_param = "ordering"
    # The sortable columns (inventory.filtersets.NODE_ORDERING keys), in order.
    columns = (
        ("hostname", "Hostname"),
        ("state", "State"),
        ("serial", "Serial"),
        ("gpu_model", "GPUs"),
        ("site", "Site"),
        ("rack", "Rack / U"),
        ("state_changed", "State changed"),
    )

    def rows_of(self, request):
        return selectors.node_queryset()

    def filter_data(self, params):
        data = params.copy()
        data.setlist("state", [v for v in params.getlist("state") if v])  # "any" sends ""
        return data

    def sort(self, rows, params):
        # The filterset sorts (its `ordering`); a refused one sorts by its default.
        valid = self.filterset.is_bound and self.filterset.is_valid()
        return rows, params.get("ordering", "") if valid else ""

    def more_context(self, request, page):
        return bulk_bar.bar_context(request)


node_list = NodeList.as_view()


def _action_rows(request, node) -> list[tuple]:
    """(action, choices) for the buttons: choices feed the chooser an action declares."""
    if not can(request.user, ACT, site_of(node)):
        return []
    rows = []
    for action in available_actions(node.state, node.role):
        choices = action.choice_param[1]() if action.choice_param else None
        rows.append((action, choices))
    return rows


def node_context(request, node) -> dict:
    operation = selectors.active_operation(node)
    recent = selectors.recent_operations(node)
    return {
        "node": node,
        "actions": _action_rows(request, node),
        "events": selectors.recent_events(node),
        "operations": recent,
        "active_operation": operation,
        "active_plan": selectors.active_plan(node),
        "cancel_offered": operation is not None and offers_cancel(operation),
        "polling": operation is not None or node.state in TRANSITIONAL_STATES,
        "version": node_version(node, recent),
        "can_write": can(request.user, WRITE, site_of(node)),
        "can_act": can(request.user, ACT, site_of(node)),
        "can_delete": can(request.user, ADMIN, site_of(node)),
    }


def node_version(node, recent_operations) -> str:
    """What the page's other regions depend on: the state, the last operation's status,
    the facts last observed. The live region's poll sends the version it was drawn with;
    when it differs the answer fires `node-changed`, and the hardware, gates, boot, drift,
    RMA and health panels fetch themselves again (no full reload)."""
    last = recent_operations[0] if recent_operations else None
    observed = node.observed_at.timestamp() if node.observed_at else 0
    return "-".join(
        str(x)
        for x in (
            node.state,
            int(node.state_changed.timestamp() * 1000) if node.state_changed else 0,
            last.pk if last else 0,
            last.status if last else "",
            int(observed * 1000),
        )
    )


NODE_PARTS = {"facts": "#node-facts"}


@login_required
def node_detail(request, pk: int):
    require(request, VIEW)
    node = visible_or_404(request.user, selectors.node_detail_queryset(), pk=pk)
    template = "inventory/node_detail.html"
    if request.htmx:
        template += NODE_PARTS.get(request.GET.get("part", ""), "#node-live")
    context = node_context(request, node)
    response = render(request, template, context)
    seen = request.GET.get("seen")
    if request.htmx and seen and seen != context["version"]:
        response["HX-Trigger"] = "node-changed"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def node_oob(request, pk: int):
    """Power state and BMC health as last read; POST asks a worker to read them again."""
    require(request, VIEW)
    node = visible_or_404(request.user, selectors.node_queryset(), pk=pk)
    if request.method == "POST":
        require(request, ACT, on=node)
        operations.request_power_refresh(node)
    return render(request, "inventory/node_detail.html#node-oob", {"node": node})


@login_required
@require_POST
def node_action(request, pk: int, name: str):
    node = visible_or_404(request.user, selectors.node_detail_queryset(), pk=pk)
    require(request, ACT, on=node)
    form = ActionForm(request.POST)
    if not form.is_valid():
        # Nothing was started: the page again with the message, a 400 (htmx swaps no
        # 4xx, so its panel comes back as a 200).
        messages.error(request, form.error_text())
        template = "inventory/node_detail.html" + ("#node-live" if request.htmx else "")
        context = node_context(request, node)
        return render(request, template, context, status=200 if request.htmx else 400)
    try:
        services.start_action(
            node,
            name,
            actor_of(request.user),
            reason=form.cleaned_data["reason"],
            params=form.params,
        )
        messages.success(request, f"{label_of(name)} started.")
    except services.UnknownAction:
        messages.error(request, f"There is no action '{name}'.")
    except DomainConflict as exc:  # not legal in its state, a busy node, ...
        messages.error(request, str(exc))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    if not request.htmx:
        return redirect(node)
    node = visible_or_404(request.user, selectors.node_detail_queryset(), pk=pk)
    return render(request, "inventory/node_detail.html#node-live", node_context(request, node))


RACK_ACTIONS = ("power_on", "power_off", "power_cycle", "inspect")


def _rack_context(request, rack: Rack, operation=None) -> dict:
    operation = operation or selectors.latest_rack_operation(rack)
    return {
        "rack": rack,
        "slots": selectors.rack_elevation(rack),
        "rack_actions": [ACTIONS[a] for a in RACK_ACTIONS]
        if can(request.user, ACT, rack.site_id)
        else [],
        "operation": operation,
        "children": selectors.operation_children(operation) if operation else [],
        "polling": bool(operation and not operation.is_finished),
        "can_write": can(request.user, WRITE, rack.site_id),
    }


class RackDetail(ScopedDetail):
    template_name = "inventory/rack_detail.html"
    partial = "rack-progress"  # the rack operation's progress, polled while it runs

    def queryset(self, request):
        return Rack.objects.select_related("site")

    def context(self, request, obj):
        return _rack_context(request, obj)


rack_detail = RackDetail.as_view()


@login_required
@require_POST
def rack_action(request, pk: int, name: str):
    rack = visible_or_404(request.user, Rack.objects.select_related("site"), pk=pk)
    require(request, ACT, on=rack)
    if name not in RACK_ACTIONS:
        messages.error(request, f"'{name}' is not a rack action.")
        return redirect(rack)
    nodes = rack.nodes.exclude(state=NodeState.DECOMMISSIONED).order_by("rack_unit", "pk")
    try:
        op = bulk.start_bulk_action(nodes, name, actor_of(request.user), rack=rack)
    except ValidationError as exc:  # an empty rack: the API's 400, said on the page
        messages.error(request, " ".join(exc.messages))
        op = None
    if not request.htmx:
        return redirect(rack)
    return render(
        request, "inventory/rack_detail.html#rack-progress", _rack_context(request, rack, op)
    )


@login_required
def rack_list(request):
    require(request, VIEW)
    writable = sites_where(request.user, WRITE)
    context = {
        "sites": selectors.sites_with_racks(request.user),
        "writable": writable,  # None: every site
        "can_create_site": can(request.user, WRITE),
        "can_create_rack": writable is None or bool(writable),
    }
    return render(request, "inventory/rack_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def node_import(request):
    """Upload a CSV. A small file is imported at once (nodes, or every problem, on return);
    a large one is handed to a worker and its progress page follows it. "Preview" checks
    it all and writes nothing: what would be created and updated, or every problem."""
    require(request, WRITE)
    form = ImportForm(request.POST or None, request.FILES or None)
    operation = preview = None
    if request.method == "POST" and form.is_valid():
        upload, update = form.cleaned_data["file"], form.cleaned_data["update"]
        try:
            if "preview" in request.POST:
                preview = imports.preview(upload, update=update)
            else:
                operation = import_operations.start_import(
                    upload, actor_of(request.user), upload.name, update=update
                )
        except imports.ImportRefused as exc:
            form.add_error("file", str(exc))
        else:
            if operation and operation.status == OperationStatus.SUCCEEDED:
                done = f"Imported {plural(operation.result['created'], 'node')}"
                if update:
                    done += f", updated {operation.result['updated']}"
                messages.success(request, f"{done}.")
                return redirect("inventory:node_list")
            if operation and not operation.is_finished:
                return redirect("inventory:node_import_status", pk=operation.pk)
    context = {
        "form": form,
        "operation": operation,
        "preview": preview,
        "recent": selectors.recent_imports(),
        "sync_rows": settings.CORRAL_IMPORT_SYNC_ROWS,
    }
    return render(request, "inventory/node_import.html", context)


@login_required
def node_import_status(request, pk: int):
    """An import's progress, then its outcome; the HTMX partial polls while it runs."""
    require(request, VIEW)
    operation = visible_or_404(request.user, selectors.import_operations(), pk=pk)
    template = "inventory/node_import_status.html"
    if request.htmx:
        template += "#import-progress"
    return render(request, template, {"operation": operation, "polling": not operation.is_finished})


@login_required
def import_template(request):
    """The CSV header and one example row, to fill in."""
    require(request, VIEW)
    response = HttpResponse(imports.template_csv(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="corral-nodes.csv"'
    return response
