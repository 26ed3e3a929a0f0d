"""A case's page and its writes. Each write checks ACT, calls rma.services, and turns every
refusal (illegal transition, missing resolution, busy node, bad input) into a message next
to what was tried: the person sees why, never a 500. HTMX requests get the `case-live`
region back; plain posts are redirected to the page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.errors import DomainConflict
from inventory.permissions import ACT, VIEW, actor_of, can, site_of
from inventory.scope import visible_or_404

from .. import selectors, services
from ..choices import CaseStatus
from ..forms import CaseEditForm, CloseForm, NoteForm, PartForm
from ..models import Case
from ..workflow import allowed_from
from . import require

# What the close may refuse with (the case's workflow, the node's action): every domain
# refusal is a DomainConflict, shown as its sentence.
REFUSALS = DomainConflict
STATUS_LABELS = dict(CaseStatus.choices)


def _live_context(request, case: Case, forms: dict) -> dict:
    can_act = can(request.user, ACT, site_of(case))
    allowed = allowed_from(case.status) if can_act else []
    return {
        "case": case,
        "events": selectors.history(case),
        "can_act": can_act,
        # closing has its own form (it needs a resolution); the rest are plain buttons
        "transitions": [(n, STATUS_LABELS[n]) for n in allowed if n != CaseStatus.CLOSED],
        "can_close": CaseStatus.CLOSED in allowed,
        "edit_form": forms.get("edit") or CaseEditForm(instance=case),
        "note_form": forms.get("note") or NoteForm(),
        "part_form": forms.get("part") or PartForm(),
        "close_form": forms.get("close") or CloseForm(),
    }


def _page(request, pk: int, status: int = 200, **forms):
    case = visible_or_404(request.user, selectors.case_queryset(), pk=pk)
    context = _live_context(request, case, forms)
    if request.htmx:
        return render(request, "rma/case_detail.html#case-live", context)
    context["evidence"] = selectors.case_evidence(case)
    return render(request, "rma/case_detail.html", context, status=status)


def _after_write(request, pk: int, **forms):
    """A write's answer: the region (HTMX), the page with the form's errors (plain post
    with bad input: 400), or back to the page."""
    if request.htmx:
        return _page(request, pk, **forms)
    if any(form.errors for form in forms.values()):
        return _page(request, pk, status=400, **forms)
    return redirect("rma:case_detail", pk=pk)


@login_required
def case_detail(request, pk: int):
    require(request, VIEW)
    return _page(request, pk)


@login_required
@require_POST
def case_transition(request, pk: int, name: str):
    case = visible_or_404(request.user, Case.objects.select_related("node__rack"), pk=pk)
    require(request, ACT, on=case)
    note, resolution, forms = "", "", {}
    if name == CaseStatus.CLOSED:
        close = CloseForm(request.POST)
        if not close.is_valid():
            messages.error(request, "Closing needs a resolution: pick one and close again.")
            return _after_write(request, pk, close=close)
        note, resolution = close.cleaned_data["note"], close.cleaned_data["resolution"]
        forms["close"] = close
    try:
        services.move(case, name, actor_of(request.user), note=note, resolution=resolution)
    except REFUSALS as exc:
        messages.error(request, str(exc))
        return _after_write(request, pk, **forms)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _after_write(request, pk, **forms)
    label = STATUS_LABELS.get(name, name)
    messages.success(request, f"Case is now {label.lower()}.")
    return _after_write(request, pk)


@login_required
@require_POST
def case_note(request, pk: int):
    case = visible_or_404(request.user, Case.objects.select_related("node__rack"), pk=pk)
    require(request, ACT, on=case)
    form = NoteForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The note was not added: it is empty or too long.")
        return _after_write(request, pk, note=form)
    services.add_note(case, actor_of(request.user), form.cleaned_data["body"])
    messages.success(request, "Note added.")
    return _after_write(request, pk)


@login_required
@require_POST
def case_edit(request, pk: int):
    case = visible_or_404(request.user, Case.objects.select_related("node__rack"), pk=pk)
    require(request, ACT, on=case)
    form = CaseEditForm(request.POST, instance=case)
    if form.is_valid():
        changes = form.changes()
        try:
            services.update_case(Case.objects.get(pk=pk), changes, actor_of(request.user))
        except IntegrityError:
            # Someone took the ticket id between the form's check and the write.
            form.add_error("ticket", "Another case already has this ticket.")
        else:
            names = ", ".join(f.replace("_", " ") for f in changes) or "nothing changed"
            messages.success(request, f"Saved: {names}.")
            return _after_write(request, pk)
    messages.error(request, "Not saved: fix the fields marked below.")
    return _after_write(request, pk, edit=form)


@login_required
@require_POST
def case_part(request, pk: int):
    case = visible_or_404(request.user, Case.objects.select_related("node__rack"), pk=pk)
    require(request, ACT, on=case)
    form = PartForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The part was not recorded: fix the fields marked below.")
        return _after_write(request, pk, part=form)
    services.add_part(case, actor_of(request.user), **form.cleaned_data)
    messages.success(request, f"Part recorded: {form.cleaned_data['component']}.")
    return _after_write(request, pk)
