"""Baselines: everyone with a role reads them; only admins create, edit and delete, and
every write goes through drift.baselines (which keeps the revision history)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from core.web import ListPage
from inventory.permissions import ADMIN, VIEW, actor_of, can
from inventory.web import FleetDetail

from .. import baselines, selectors
from ..forms import BaselineForm
from ..models import Baseline
from . import require


class BaselineList(ListPage):
    """The fleet's baselines (every reader sees them), with the nodes each one matches."""

    template_name = "drift/baseline_list.html"
    rows_name = "baselines"

    def check(self, request):
        require(request, VIEW)

    def queryset(self, request):
        return selectors.baseline_list()  # a list: the node counts are computed

    def more_context(self, request, page):
        return {"can_edit": can(request.user, ADMIN)}


baseline_list = BaselineList.as_view()


class BaselineDetail(FleetDetail):
    template_name = "drift/baseline_detail.html"

    def queryset(self, request):
        return Baseline.objects.all()

    def context(self, request, obj):
        return {
            "baseline": obj,
            "components": sorted(obj.components.items()),
            "revisions": selectors.baseline_revisions(obj),
            "can_edit": can(request.user, ADMIN),
        }


baseline_detail = BaselineDetail.as_view()


def _form_page(request, form: BaselineForm, baseline: Baseline | None):
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            saved = baselines.save(data, actor_of(request.user), baseline)
        except baselines.BaselineError as exc:
            form.add_baseline_error(exc.errors)
        else:
            verb = "created" if baseline is None else "saved"
            messages.success(request, f"Baseline {saved.name} {verb} (revision {saved.revision}).")
            return redirect(saved)
    status = 400 if form.errors else 200
    context = {"form": form, "baseline": baseline}
    return render(request, "drift/baseline_form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def baseline_create(request):
    require(request, ADMIN)
    return _form_page(request, BaselineForm(request.POST or None), None)


@login_required
@require_http_methods(["GET", "POST"])
def baseline_edit(request, pk: int):
    require(request, ADMIN)
    baseline = get_object_or_404(Baseline, pk=pk)
    return _form_page(request, BaselineForm(request.POST or None, instance=baseline), baseline)


@login_required
@require_http_methods(["GET", "POST"])
def baseline_delete(request, pk: int):
    require(request, ADMIN)
    baseline = get_object_or_404(Baseline, pk=pk)
    if request.method == "POST":
        baselines.delete(baseline, actor_of(request.user))
        messages.success(request, f"Baseline {baseline.name} deleted; its nodes are recomputed.")
        return redirect("drift:baseline_list")
    return render(request, "drift/baseline_confirm_delete.html", {"baseline": baseline})
