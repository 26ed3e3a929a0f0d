"""Campaign pages: the list with a form to start one, and a campaign with its progress per
rack, refreshing itself while it runs. Writes go through day2.campaigns like the API's;
a refusal is a message beside the buttons, never a 500."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from inventory.permissions import ACT, VIEW, actor_of, can, can_somewhere, site_of
from inventory.scope import restrict, visible_or_404
from inventory.web import ScopedDetail, require, require_somewhere

from . import campaigns, planning, selectors
from .campaign_flow import IllegalCampaignTransition, allowed_events
from .filtersets import CampaignFilterSet
from .forms import CampaignForm
from .models import CampaignStatus, MemberStatus

VERBS = {"pause": campaigns.pause, "resume": campaigns.resume, "cancel": campaigns.cancel}


@login_required
def campaign_list(request):
    require(request, VIEW)
    if request.htmx and request.htmx.target == "field-rack":
        # The site changed: the rack field again, with that site's racks.
        initial = {k: request.GET.get(k) for k in ("site", "rack")}
        form = CampaignForm(initial=initial, user=request.user)
        return render(request, "day2/campaign_list.html#campaign-rack", {"form": form})
    # A link may fill it in: the drift matrix's "converge these" (kind, component, site).
    shown = {k: request.GET[k] for k in ("kind", "component", "site", "rack") if k in request.GET}
    form, plan = CampaignForm(initial=shown, user=request.user), None
    if request.method == "POST":
        require_somewhere(request, ACT)  # and each selected node below
        form = CampaignForm(request.POST, user=request.user)
        form.fields["name"].required = "plan" not in request.POST  # a plan needs no name yet
        if form.is_valid():
            data = form.cleaned_data
            try:
                nodes = campaigns.select_nodes(form.selection())
                for node in nodes:
                    require(request, ACT, on=node)
                if "plan" in request.POST:  # the preview: nothing is started
                    plan = planning.plan(
                        data["kind"], data["image"], nodes, data["max_unavailable_pct"]
                    )
                else:
                    campaign = campaigns.create(
                        name=data["name"],
                        kind=data["kind"],
                        image_ref=data["image"],
                        selection=form.selection(),
                        actor=actor_of(request.user),
                        max_unavailable_pct=data["max_unavailable_pct"],
                        pause_failed_pct=data["pause_failed_pct"],
                        max_failures=data["max_failures"],
                        reason=data["reason"],
                        nodes=nodes,
                    )
                    messages.success(request, f"Campaign {campaign.name} started.")
                    return redirect(campaign)
            except ValidationError as exc:
                form.add_error(None, "; ".join(exc.messages))
    visible = restrict(selectors.campaign_queryset(), request.user)
    found = CampaignFilterSet(request.GET or None, queryset=visible)
    return render(
        request,
        "day2/campaign_list.html",
        {
            "filter": found,
            "campaigns": found.qs[:200],
            "form": form,
            "plan": plan,
            "can_start": can_somewhere(request.user, ACT),
        },
        status=400 if form.errors else 200,
    )


def _detail_context(request, campaign) -> dict:
    members = campaign.members.all()
    may_act = all(can(request.user, ACT, site_of(m.node)) for m in members)
    return {
        "campaign": campaign,
        "racks": selectors.rack_progress(campaign),
        "members": members,
        "allowed": allowed_events(campaign.status) if may_act else [],
        "polling": campaign.status in (CampaignStatus.RUNNING, CampaignStatus.PAUSED)
        and any(m.status in (MemberStatus.WAITING, MemberStatus.RUNNING) for m in members),
    }


class CampaignDetail(ScopedDetail):
    template_name = "day2/campaign_detail.html"
    partial = "campaign-live"

    def queryset(self, request):
        return selectors.campaign_queryset()

    def context(self, request, obj):
        return _detail_context(request, obj)


campaign_detail = CampaignDetail.as_view()


@login_required
@require_POST
def campaign_move(request, pk: int, verb: str):
    campaign = visible_or_404(request.user, selectors.campaign_queryset(), pk=pk)
    for member in campaign.members.all():
        require(request, ACT, on=member.node)
    if verb not in VERBS:
        messages.error(request, f"No such campaign action: {verb}.")
    else:
        try:
            VERBS[verb](campaign, actor_of(request.user), request.POST.get("reason", ""))
            messages.success(request, f"Campaign {campaign.name}: {verb} done.")
        except IllegalCampaignTransition as exc:
            messages.error(request, str(exc))
    if request.htmx:
        fresh = visible_or_404(request.user, selectors.campaign_queryset(), pk=pk)
        return render(
            request, "day2/campaign_detail.html#campaign-live", _detail_context(request, fresh)
        )
    return redirect(campaign)
