"""The node list's bulk action bar: tick nodes, run an action on them, follow it.

The bar is the page's face of `POST /api/v1/nodes/actions/{name}/`: the same
`bulk.start_bulk_action`, the same role check (ACT in each node's site) and the same
messages. Each button carries the states its action is legal in (the declarations in
inventory.actions, which `services.refusal` reads too), so the page counts "Deploy (3 of 5)"
as the ticks change, without asking the server.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import render
from django.views.decorators.http import require_POST

from core.text import plural

from . import bulk, selectors
from .actions import ACTIONS
from .choices import NodeState
from .models import Node, Operation
from .permissions import ACT, VIEW, WRITE, actor_of, can_somewhere, refused_on
from .scope import visible_or_404
from .services import UnknownAction

# The bar's actions, in its order; the others (RMA, decommission) need a reason and a
# look at each node, so they stay on the node's page.
BAR_ACTIONS = (
    "inspect",
    "power_on",
    "power_off",
    "power_cycle",
    "boot_pxe",
    "deploy",
    "drain",
    "recycle",
)


# Label edits are node edits: WRITE in each node's site, as the API's PATCH of `labels`.
LABEL_ACTIONS = {"label_add": True, "label_remove": False}
EVERY_STATE = ",".join(sorted(NodeState.values))


def bar_context(request) -> dict:
    """The bar's buttons for a user who may act somewhere; none for a viewer."""
    if not can_somewhere(request.user, ACT):
        return {"bar_actions": []}
    labels = can_somewhere(request.user, WRITE)
    rows = []
    for name in BAR_ACTIONS:
        action = ACTIONS[name]
        choices = action.choice_param[1]() if action.choice_param else None
        rows.append(
            {
                "action": action,
                "states": ",".join(sorted(action.allowed_states)),
                "choices": choices,
            }
        )
    return {"bar_actions": rows, "bar_labels": labels, "every_state": EVERY_STATE}


def _progress(request, op: Operation | None):
    context = {
        "operation": op,
        "children": selectors.operation_children(op) if op else [],
        "polling": bool(op and not op.is_finished),
    }
    response = render(request, "inventory/node_list.html#bulk-progress", context)
    if op and op.is_finished:
        response["HX-Trigger"] = "bulk-ended"  # the table reloads: the nodes' new states
    return response


@login_required
@require_POST
def node_bulk(request):
    """Run the chosen action on the ticked nodes; answer the progress panel."""
    if not can_somewhere(request.user, ACT):
        raise PermissionDenied(f"Your role does not allow '{ACT}' here.")
    name = request.POST.get("action", "")
    if name in LABEL_ACTIONS:
        return _labels(request, name)
    nodes = _picked(request)
    refused = refused_on(request.user, ACT, nodes)
    if not nodes:
        messages.error(request, "Tick at least one node.")
    elif name not in BAR_ACTIONS:
        messages.error(request, f"There is no action '{name}'.")
    elif refused:
        messages.error(request, refused)
    else:
        params = {}
        chooser = ACTIONS[name].choice_param
        if chooser and request.POST.get(f"{name}.{chooser[0]}"):  # empty: the default
            params[chooser[0]] = request.POST[f"{name}.{chooser[0]}"]
        try:
            op = bulk.start_bulk_action(nodes, name, actor_of(request.user), params=params)
        except UnknownAction:
            messages.error(request, f"There is no action '{name}'.")
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            label = ACTIONS[name].label
            on = plural(len(nodes), "node")
            messages.success(request, f"{label} started on {on}: operation #{op.pk}.")
            return _progress(request, op)
    return _progress(request, None)


def _picked(request) -> list[Node]:
    ids = [int(i) for i in request.POST.getlist("nodes") if i.isdigit()]
    return list(
        Node.objects.filter(pk__in=ids)
        .select_related("rack__site")
        .prefetch_related("labels")
        .order_by("rack_id", "rack_unit", "pk")
    )


def _labels(request, name: str):
    nodes = _picked(request)
    label = request.POST.get("label", "").strip()
    refused = refused_on(request.user, WRITE, nodes)
    if not nodes:
        messages.error(request, "Tick at least one node.")
    elif refused:
        messages.error(request, refused)
    elif not label:
        messages.error(request, "Give the label to add or remove.")
    else:
        add = LABEL_ACTIONS[name]
        try:
            changed = bulk.change_labels(nodes, label, add=add)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            done = "added to" if add else "removed from"
            messages.success(
                request, f"Label {label} {done} {changed} of {plural(len(nodes), 'node')}."
            )
    return _progress(request, None)


@login_required
def node_bulk_status(request, pk: int):
    """The progress panel of one bulk operation, polled until it ends."""
    if not can_somewhere(request.user, VIEW):
        raise PermissionDenied(f"Your role does not allow '{VIEW}' here.")
    op = visible_or_404(request.user, Operation.objects.filter(kind__startswith="bulk_"), pk=pk)
    return _progress(request, op)
