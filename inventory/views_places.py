"""Create and edit pages of sites and racks.

The form renders and parses; the API's own serializer checks and saves (same messages as
a 400 from /api/v1/sites/ and /api/v1/racks/), in one transaction, audited by auditlog's
signals. A site is created with a fleet-wide write role (it belongs to no site yet); a
rack with the write role in its site, and moving it needs that role in both sites.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from .api.serializers import CAPACITY_FIELDS, RackSerializer, SiteSerializer
from .forms import RackForm, SiteForm, add_errors
from .models import Rack, Site
from .permissions import WRITE, can_somewhere, sites_where
from .scope import visible_or_404
from .web import require


def _save(form, serializer_class, instance, data: dict, request=None):
    """The saved object, or None with the serializer's errors on the form."""
    serializer = serializer_class(instance, data=data, context={"request": request})
    if not serializer.is_valid():
        add_errors(form, serializer.errors)
        return None
    with transaction.atomic():
        return serializer.save()


@login_required
@require_http_methods(["GET", "POST"])
def site_edit(request, pk: int | None = None):
    site = visible_or_404(request.user, Site, pk=pk) if pk else None
    require(request, WRITE, on=site)  # None: a new site needs the role fleet-wide
    initial = (
        {
            "name": site.name,
            "slug": site.slug,
            "description": site.description,
            "attestation": site.attestation,
            "bmc_networks": "\n".join(site.bmc_networks),
            **{name: getattr(site, name) for name in CAPACITY_FIELDS},
        }
        if site
        else {}
    )
    form = SiteForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = {k: v for k, v in form.cleaned_data.items() if v or k != "attestation"}
        saved = _save(form, SiteSerializer, site, data, request)
        if saved is not None:
            messages.success(request, f"Saved site {saved.name}.")
            return redirect("inventory:rack_list")
    return render(request, "inventory/site_edit.html", {"site": site, "form": form})


def _writable_sites(user):
    sites = sites_where(user, WRITE)
    qs = Site.objects.order_by("name")
    return qs if sites is None else qs.filter(pk__in=sites)


@login_required
@require_http_methods(["GET", "POST"])
def rack_edit(request, pk: int | None = None):
    rack = visible_or_404(request.user, Rack.objects.select_related("site"), pk=pk) if pk else None
    if rack is not None:
        require(request, WRITE, on=rack)
    else:
        # The role somewhere: the site chosen is checked below.
        if not can_somewhere(request.user, WRITE):
            raise PermissionDenied("Your role does not allow 'write' here.")
    initial: dict = {"u_height": 42}
    if rack is not None:
        initial = {
            f: getattr(rack, f)
            for f in ("site", "name", "row", "position", "u_height", "power_budget_kw", "fabric")
        }
        initial["leaf_switches"] = " ".join(rack.leaf_switches or [])
        initial["delivered"] = rack.delivered
    elif request.GET.get("site"):
        initial["site"] = request.GET["site"]
    form = RackForm(request.POST or None, initial=initial, sites=_writable_sites(request.user))
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        require(request, WRITE, on=data["site"])  # where it lands
        data["site"] = data["site"].pk
        saved = _save(form, RackSerializer, rack, data)
        if saved is not None:
            messages.success(request, f"Saved rack {saved}.")
            return redirect(saved)
    return render(request, "inventory/rack_edit.html", {"rack": rack, "form": form})
