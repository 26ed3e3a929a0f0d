"""The drift matrix (nodes x components, filtered and paged), its CSV export and the bulk
reimage of ticked nodes. The page costs the same queries at 30 nodes as at 12,500: the
header (selectors.header: never reads the OK cells), one page of nodes and their cells."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import QueryDict, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from attestation import selectors as attestation
from attestation.selectors import UNATTESTED, Standing
from core import csvsafe
from inventory import bulk
from inventory import selectors as inventory_selectors
from inventory.choices import NodeState
from inventory.permissions import ACT, VIEW, actor_of, can, refused_on
from inventory.scope import restrict
from inventory.services import UnknownAction
from provisioning.deployments import image_choices

from .. import selectors
from ..filtersets import DriftFilterSet
from ..forms import ConvergeForm, ReimageForm
from ..selectors import CellView
from . import require, require_somewhere, with_params

PAGE_SIZE = 50
CSV_CHUNK = 500
TEMPLATE = "drift/matrix.html"


def filter_data(params: QueryDict) -> QueryDict:
    """The form's "any" sends empty values; a multiple choice would refuse them."""
    data = params.copy()
    data.setlist("state", [v for v in data.getlist("state") if v])
    return data


class _CountedPaginator(Paginator):
    """The summary has counted the filtered nodes already: no second COUNT."""

    def __init__(self, object_list: Any, per_page: int, count: int) -> None:
        super().__init__(object_list, per_page)
        self.__dict__["count"] = count


@dataclass
class Row:
    node: Any
    drifted: list[str]
    image: str
    cells: list[CellView | None]
    url: str = ""
    attestation: Standing = UNATTESTED
    work: tuple[str, int] | None = None  # what is under way on it, and its operation


def filtered(params: QueryDict, user: Any) -> DriftFilterSet:
    """The matrix's nodes: the query's filters, within the sites the user reads."""
    return DriftFilterSet(filter_data(params), queryset=restrict(selectors.nodes(), user))


def columns(summary: dict[str, Any], params: QueryDict) -> list[dict[str, Any]]:
    """Per component: the summary's counts, the link to its drifted nodes and to its skew."""
    out = []
    base = params.copy()
    base.pop("page", None)
    for name, info in summary["components"].items():
        out.append(
            {
                "name": name,
                **info,
                "drifted_query": with_params(base, component=name, only_drifted="true"),
                "skew_query": with_params(base, component=name),
                # A converge campaign can bring firmware and BIOS settings to baseline.
                "convergeable": name.startswith(("firmware.", "bios.")),
                "converge_query": urlencode(
                    {"kind": "converge", "component": name}
                    | ({"site": params["site"]} if params.get("site", "").isdigit() else {})
                ),
            }
        )
    return out


def matrix_context(request, params: QueryDict | None = None) -> dict[str, Any]:
    params = request.GET if params is None else params
    filterset = filtered(params, request.user)
    nodes = filterset.qs
    summary = selectors.header(nodes)
    cols = columns(summary, params)
    page = _CountedPaginator(nodes, PAGE_SIZE, summary["nodes"]).get_page(params.get("page"))
    page_nodes = list(page.object_list)
    cells = selectors.cells_for([n.pk for n in page_nodes])
    trust = attestation.standings([n.pk for n in page_nodes])
    under_way = selectors.work_under_way([n.pk for n in page_nodes])
    rows = []
    for node in page_nodes:
        state = getattr(node, "drift_state", None)
        mine = cells.get(node.pk, {})
        rows.append(
            Row(
                node=node,
                drifted=state.drifted if state else [],
                image=state.image if state else "",
                cells=[mine.get(c["name"]) for c in cols],
                url=node.get_absolute_url(),
                attestation=trust.get(node.pk, UNATTESTED),
                work=under_way.get(node.pk),
            )
        )
    return {
        "filter": filterset,
        "summary": summary,
        "columns": cols,
        "rows": rows,
        "page": page,
        "querystring": params.urlencode(),
        "can_act": can(request.user, ACT),
        "images": _image_choices() if can(request.user, ACT) else [],
        "component": params.get("component", "").strip(),
    }


def _render(request, context: dict[str, Any], status: int = 200):
    if request.htmx and not request.htmx.boosted:
        return render(request, f"{TEMPLATE}#drift-table", context, status=status)
    context["sites"] = restrict(selectors.sites(), request.user)
    context["racks"] = restrict(selectors.racks(), request.user)
    context["states"] = NodeState.choices
    return render(request, TEMPLATE, context, status=status)


def _image_choices() -> list[tuple[str, str]]:
    return [(label, label) for _pk, label in image_choices()]


@login_required
def matrix(request):
    require(request, VIEW)
    return _render(request, matrix_context(request))


@login_required
@require_POST
def reimage(request):
    """Deploy an image on the ticked nodes through inventory's bulk path: one operation, a
    child per node, and a node that cannot be deployed now gets a failed child saying why."""
    form = ReimageForm(request.POST)

    def start(picked: list, ids: list[int]) -> Any:
        image = form.cleaned_data["image"] or _most_common_image(ids)
        if not image:
            messages.error(
                request, "None of the ticked nodes has been deployed yet: pick the image."
            )
            return None
        return _bulk(
            request, picked, "deploy", "Reimage", f"Reimage with {image}", {"image": image}
        )

    return _ticked_action(request, form, "Reimage", start)


@login_required
@require_POST
def converge(request):
    """Converge the ticked nodes (the `converge` node action: drain if in service, firmware,
    BIOS, gates, admit) through inventory's bulk path, as reimage deploys."""
    return _ticked_action(
        request,
        ConvergeForm(request.POST),
        "Converge",
        lambda picked, _ids: _bulk(request, picked, "converge", "Converge", "Converge", {}),
    )


def _ticked_action(request, form, verb: str, start: Callable[[list, list[int]], Any]):
    """The matrix's buttons on ticked nodes: the form checked, the user's right to act on
    every ticked node checked (as the API does), then `start(nodes, ids)`; the page comes
    back with the operation it started and its children."""
    require_somewhere(request, ACT)
    operation, status = None, 200
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    else:
        ids = form.cleaned_data["nodes"]
        found = selectors.nodes_in(ids)
        picked = [found[i] for i in ids if i in found]
        refused = refused_on(request.user, ACT, picked)
        if refused:
            messages.error(request, f"{verb} not started: {refused}")
            # htmx swaps no 4xx answer: the table with the refusal comes back as a 200.
            status = 200 if request.htmx else 403
        elif not picked:
            messages.error(request, "None of the ticked nodes exists any more.")
        else:
            operation = start(picked, ids)
    context = matrix_context(request)
    context["operation"] = operation
    if operation is not None:
        context["children"] = inventory_selectors.operation_children(operation)
    return _render(request, context, status=status)


def _most_common_image(ids: list[int]) -> str:
    counts = selectors.expected_images(ids)
    return counts.most_common(1)[0][0] if counts else ""


def _bulk(request, nodes: list, action: str, verb: str, what: str, params: dict):
    try:
        op = bulk.start_bulk_action(nodes, action, actor_of(request.user), params=params)
    except (ValidationError, UnknownAction) as exc:
        text = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        messages.error(request, f"{verb} not started: {text}")
        return None
    refused = op.children.filter(status__in=["failed", "skipped"]).count()
    started = len(nodes) - refused
    messages.success(
        request,
        f"{what}: operation #{op.pk} started on {started} node"
        f"{'s' if started != 1 else ''}"
        + (f"; {refused} refused (see below)." if refused else "."),
    )
    return op


@login_required
def export_csv(request):
    """The filtered matrix as CSV, one row per node, streamed: node rows and their cells
    are read 500 nodes at a time (two queries per chunk)."""
    require(request, VIEW)
    filterset = filtered(request.GET, request.user)
    nodes = filterset.qs
    names = list(selectors.header(nodes)["components"])
    ids = selectors.ordered_ids(nodes)
    response = StreamingHttpResponse(_csv_lines(names, ids), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="drift.csv"'
    return response


class _Echo:
    def write(self, value: str) -> str:
        return value


def _csv_lines(names: list[str], ids: list[int]) -> Iterator[str]:
    writer = csvsafe.writer(_Echo())
    header = ["hostname", "site", "rack", "state", "drifted"]
    for name in names:
        header += [f"{name} observed", f"{name} status"]
    yield writer.writerow(header)
    for start in range(0, len(ids), CSV_CHUNK):
        chunk = ids[start : start + CSV_CHUNK]
        found = selectors.nodes_in(chunk)
        cells = selectors.cells_for(chunk)
        for nid in chunk:
            node = found.get(nid)
            if node is None:  # deleted while the export ran
                continue
            state = getattr(node, "drift_state", None)
            rack = node.rack
            line = [
                node.hostname,
                rack.site.slug if rack else "",
                rack.name if rack else "",
                node.state,
                " ".join(state.drifted) if state else "",
            ]
            mine = cells.get(nid, {})
            for name in names:
                cell = mine.get(name)
                line += [cell.observed, cell.status] if cell else ["", ""]
            yield writer.writerow(line)
