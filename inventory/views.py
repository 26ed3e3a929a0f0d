"""Dashboard pages. HTMX requests get the partial they swap; permission is checked here,
never only in templates."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
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
    ROLE_CAPABILITIES,
    VIEW,
    WRITE,
    actor_of,
    can,
    can_somewhere,
    site_of,
    sites_where,
)
from .scope import restrict, visible_or_404


def with_params(params, **changes: str | None) -> str:
    """The query string of `params` with keys changed (None removes one): links that page,
    sort or filter a list keep every other filter (the RMA queue, the drift matrix)."""
    out = params.copy()
    for key, value in changes.items():
        out.pop(key, None)
        if value is not None:
            out[key] = value
    return out.urlencode()


def page_links(page, params) -> dict[str, str]:
    """Query strings of the previous and next pages of `page`, every filter kept."""
    links = {}
    if page.has_previous():
        links["previous"] = with_params(params, page=str(page.previous_page_number()))
    if page.has_next():
        links["next"] = with_params(params, page=str(page.next_page_number()))
    return links


_NOWHERE = object()


def require(request, capability: str, on: object = _NOWHERE) -> None:
    """403 unless the user may. Reading needs `view` in any site; anything else needs the
    capability in the site of `on`, or, without an object, fleet-wide: what belongs to no
    site (baselines, the audit trail) is not a site role's (issue 36: a site's admin
    edited the fleet's baselines, a site's technician reimaged another site's nodes).
    A page that checks each object it then acts on uses require_somewhere first."""
    if capability == VIEW:
        allowed = can_somewhere(request.user, capability)
    else:
        allowed = can(request.user, capability, site_of(on) if on is not _NOWHERE else None)
    if not allowed:
        raise PermissionDenied(refusal(capability, on))


def require_somewhere(request, capability: str) -> None:
    """403 unless the user holds the capability fleet-wide or in some site: the entry
    check of a page that then checks every object it acts on (require(..., on=obj) or
    inventory.permissions.refused_on)."""
    if not can_somewhere(request.user, capability):
        raise PermissionDenied(refusal(capability, None))


def refusal(capability: str, on: object = _NOWHERE) -> str:
    """Why a page refused: the capability and the roles that hold it (the 403 page shows
    this, so a technician knows whom to ask for what)."""
    roles = [role for role, caps in ROLE_CAPABILITIES.items() if capability in caps]
    where = " (fleet-wide, or in this site)" if on is not _NOWHERE else ""
    return (
        f"Your role does not allow '{capability}' here: "
        f"it needs the {' or '.join(roles)} role{where}."
    )


# The node list's sortable columns (inventory.filtersets.NODE_ORDERING keys), in order.
NODE_COLUMNS = (
    ("hostname", "Hostname"),
    ("state", "State"),
    ("serial", "Serial"),
    ("gpu_model", "GPUs"),
    ("site", "Site"),
    ("rack", "Rack / U"),
    ("state_changed", "State changed"),
)
PAGE_NAV = (
    ("first", "« first"),
    ("previous", "‹ previous"),
    ("next", "next ›"),
    ("last", "last »"),
)


def sort_links(params, current: str, columns=NODE_COLUMNS) -> list[dict[str, str]]:
    """Per column: the query that sorts by it (a second click reverses), every filter kept
    and back to page 1, and the arrow showing the current direction."""
    links = []
    for key, title in columns:
        arrow = {key: "▲", f"-{key}": "▼"}.get(current, "")
        target = f"-{key}" if current == key else key
        query = with_params(params, ordering=target, page=None)
        links.append({"key": key, "title": title, "query": query, "arrow": arrow})
    return links


def page_nav(page, params) -> list[tuple[str, str, str | None]]:
    """(rel, text, query or None) for first, previous, next and last, filters kept."""
    links = page_links(page, params)
    if page.number > 1:
        links["first"] = with_params(params, page="1")
    if page.number < page.paginator.num_pages:
        links["last"] = with_params(params, page=str(page.paginator.num_pages))
    return [(rel, text, links.get(rel)) for rel, text in PAGE_NAV]


@login_required
def node_list(request):
    require(request, VIEW)
    params = request.GET
    data = params.copy()
    data.setlist("state", [v for v in params.getlist("state") if v])  # "any" sends ""
    filterset = NodeFilterSet(
        data or None, queryset=restrict(selectors.node_queryset(), request.user)
    )
    page = Paginator(filterset.qs, 100).get_page(params.get("page"))
    ordering = params.get("ordering", "") if filterset.is_bound and filterset.is_valid() else ""
    context = {
        "filter": filterset,
        "page": page,
        "nodes": page.object_list,
        "page_nav": page_nav(page, params),
        "ordering": ordering,
        "sorts": sort_links(params, ordering),
        **bulk_bar.bar_context(request),
    }
    template = "inventory/node_list.html"
    if request.htmx and not request.htmx.boosted:
        template += "#node-table"
    return render(request, template, context)


def _action_rows(request, node) -> list[tuple]:
    """(action, choices) for the buttons: choices feed the chooser an action declares."""
    if not can(request.user, ACT, site_of(node)):
        return []
    rows = []
    for action in available_actions(node.state):
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


@login_required
def rack_detail(request, pk: int):
    require(request, VIEW)
    rack = visible_or_404(request.user, Rack.objects.select_related("site"), pk=pk)
    template = "inventory/rack_detail.html"
    if request.htmx:
        template += "#rack-progress"
    return render(request, template, _rack_context(request, rack))


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
