"""Create and edit pages of sites and racks (core.editing.EditPage).

The form renders and parses; the API's own serializer checks and saves (same messages as
a 400 from /api/v1/sites/ and /api/v1/racks/), in one transaction, audited by auditlog's
signals. A site is created with a fleet-wide write role (it belongs to no site yet); a
rack with the write role in its site, and moving it needs that role in both sites.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect

from core.editing import EditPage, save_with

from .api.serializers import CAPACITY_FIELDS, RackSerializer, SiteSerializer
from .forms import RackForm, SiteForm
from .models import Rack, Site
from .permissions import WRITE, can_somewhere, sites_where
from .scope import visible_or_404
from .web import require

RACK_FIELDS = ("site", "name", "row", "position", "u_height", "power_budget_kw", "fabric")


class SiteEdit(EditPage):
    template_name = "inventory/site_edit.html"
    form_class = SiteForm

    def load(self, request, pk: int | None = None):
        self.obj = visible_or_404(request.user, Site, pk=pk) if pk else None
        require(request, WRITE, on=self.obj)  # None: a new site needs the role fleet-wide

    def initial(self) -> dict[str, Any]:
        site = self.obj
        if site is None:
            return {}
        return {
            "name": site.name,
            "slug": site.slug,
            "description": site.description,
            "attestation": site.attestation,
            "boot_media": site.boot_media,
            "bmc_networks": "\n".join(site.bmc_networks),
            **{name: getattr(site, name) for name in CAPACITY_FIELDS},
        }

    def save(self, request, form):
        unsent = ("attestation", "boot_media")  # empty: the site keeps its policy
        data = {k: v for k, v in form.cleaned_data.items() if v or k not in unsent}
        return save_with(SiteSerializer, self.obj, data, request)

    def saved(self, request, obj):
        messages.success(request, f"Saved site {obj.name}.")
        return redirect("inventory:rack_list")

    def context(self, request, form):
        return {"site": self.obj, "form": form}


def _writable_sites(user):
    sites = sites_where(user, WRITE)
    qs = Site.objects.order_by("name")
    return qs if sites is None else qs.filter(pk__in=sites)


class RackEdit(EditPage):
    template_name = "inventory/rack_edit.html"
    form_class = RackForm

    def load(self, request, pk: int | None = None):
        rack = None
        if pk:
            rack = visible_or_404(request.user, Rack.objects.select_related("site"), pk=pk)
            require(request, WRITE, on=rack)
        elif not can_somewhere(request.user, WRITE):  # the site chosen is checked on save
            raise PermissionDenied("Your role does not allow 'write' here.")
        self.obj, self.site_asked = rack, request.GET.get("site")

    def initial(self) -> dict[str, Any]:
        rack = self.obj
        if rack is None:
            return {"u_height": 42, **({"site": self.site_asked} if self.site_asked else {})}
        return {
            **{f: getattr(rack, f) for f in RACK_FIELDS},
            "leaf_switches": " ".join(rack.leaf_switches or []),
            "delivered": rack.delivered,
        }

    def form_kwargs(self, request) -> dict[str, Any]:
        return {"sites": _writable_sites(request.user)}

    def save(self, request, form):
        data = dict(form.cleaned_data)
        require(request, WRITE, on=data["site"])  # where it lands
        data["site"] = data["site"].pk
        return save_with(RackSerializer, self.obj, data)

    def saved(self, request, obj):
        messages.success(request, f"Saved rack {obj}.")
        return redirect(obj)

    def context(self, request, form):
        return {"rack": self.obj, "form": form}


site_edit = SiteEdit.as_view()
rack_edit = RackEdit.as_view()
