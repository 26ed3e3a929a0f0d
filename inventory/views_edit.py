"""Edit pages of a node: its fields and placement, its BMC, its network interfaces.

Thin, as the API's views are: the same services write (one transaction each, audited by
django-auditlog's signals with the user as actor) and their messages land on the form
field they name. Each write needs the role the API asks for (docs/roles.md) in the node's
site, and a move needs it in the site the node lands in too.
"""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from core.editing import EditPage

from . import services
from .forms import BMCForm, InterfaceForm, NodeForm
from .models import BMC, NetworkInterface, Node, Rack
from .permissions import ADMIN, WRITE, can, sites_where
from .scope import visible_or_404
from .web import require

# How inspection reports a BMC of several systems (provisioning.drivers.redfish.client):
# "BMC at ... manages 2 systems (Blade1, Blade2); set system_id to one of them".
_SYSTEMS = re.compile(r"manages \d+ systems \(([^)]*)\)")


def writable_racks(user, current: Rack | None = None):
    """The racks a node may be moved to: those in the sites where the user may write."""
    racks = Rack.objects.select_related("site").order_by("site__name", "name")
    sites = sites_where(user, WRITE)
    if sites is None:
        return racks
    keep = set(sites)
    return (
        racks.filter(site_id__in=keep)
        if current is None
        else racks.filter(site_id__in=keep | {current.site_id})
    )


def reported_systems(node: Node) -> list[str]:
    """The system ids the node's BMC reported, if inspection kept them (its hardware facts
    or the message of the inspection that found several systems); else none."""
    stored = (node.hardware_facts or {}).get("systems")
    if isinstance(stored, list):
        return [str(s) for s in stored if s]
    for text in (node.failure_reason, node.bmc_message):
        found = _SYSTEMS.search(text or "")
        if found:
            return [s.strip() for s in found.group(1).split(",") if s.strip() != "none"]
    return []


def _node(request, pk: int) -> Node:
    return visible_or_404(request.user, Node.objects.select_related("rack__site"), pk=pk)


class NodePart(EditPage):
    """An edit page of a node or a part of it: the write role in the node's site."""

    def load(self, request, pk: int, **kwargs):
        self.node = _node(request, pk)
        require(request, WRITE, on=self.node)


class NodeEdit(NodePart):
    template_name = "inventory/node_edit.html"
    form_class = NodeForm

    def initial(self):
        node = self.node
        return {
            **{f: getattr(node, f) for f in services.NODE_FIELDS},
            "labels": " ".join(label.name for label in node.labels.all()),
        }

    def form_kwargs(self, request):
        return {"racks": writable_racks(request.user, self.node.rack)}

    def save(self, request, form):
        node, fields = self.node, dict(form.cleaned_data)
        labels = fields.pop("labels")
        password = fields.pop("bmc_password")
        bmc = {"password": password} if password and hasattr(node, "bmc") else None
        rack = fields["rack"]
        if rack is not None and rack.pk != node.rack_id:
            require(request, WRITE, on=rack)  # a move needs the role where it lands
        elif rack is None and node.rack_id and not can(request.user, WRITE):
            raise PermissionDenied("An unracked node belongs to no site: a fleet-wide role.")
        services.update_node(node, bmc=bmc, labels=labels, **fields)
        return node

    def saved(self, request, obj):
        messages.success(request, f"Saved {obj.hostname}.")
        return redirect(obj)

    def context(self, request, form):
        return {"node": self.node, "form": form}


class BMCEdit(NodePart):
    """The BMC's settings. The password is write-only: never rendered, blank keeps the
    stored one, and a new destination needs it given again (BMC.check_credential)."""

    template_name = "inventory/bmc_edit.html"
    form_class = BMCForm
    error_prefix = "bmc."

    def load(self, request, pk: int, **kwargs):
        super().load(request, pk)
        self.bmc = BMC.objects.filter(node=self.node).first()

    def initial(self):
        if self.bmc is None:
            return {"protocol": "redfish", "verify_tls": True}
        return {f: getattr(self.bmc, f) for f in services.BMC_FIELDS if f != "password"}

    def save(self, request, form):
        services.update_node(self.node, bmc=dict(form.cleaned_data))
        return self.node

    def saved(self, request, obj):
        messages.success(request, f"Saved the BMC of {obj.hostname}.")
        return redirect(obj)

    def context(self, request, form):
        return {
            "node": self.node,
            "form": form,
            "has_password": bool(self.bmc and self.bmc.password),
            "systems": reported_systems(self.node),
        }


class InterfaceEdit(NodePart):
    """Add (no `nic`) or edit one of the node's interfaces."""

    template_name = "inventory/interface_edit.html"
    form_class = InterfaceForm

    def load(self, request, pk: int, nic: int | None = None, **kwargs):
        super().load(request, pk)
        self.iface = (
            visible_or_404(request.user, NetworkInterface, pk=nic, node=self.node) if nic else None
        )

    def initial(self):
        if self.iface is None:
            return {}
        return {f: getattr(self.iface, f) for f in ("name", "mac", "ip", "boot", "fabric_rail")}

    def save(self, request, form):
        target = self.iface or NetworkInterface(node=self.node)
        for key, value in form.cleaned_data.items():
            setattr(target, key, value)
        services.save_interface(target)
        return target

    def saved(self, request, obj):
        messages.success(request, f"Saved interface {obj.mac} of {self.node.hostname}.")
        return redirect(self.node)

    def context(self, request, form):
        return {
            "node": self.node,
            "form": form,
            "iface": self.iface,
            "can_delete": _can_delete(request, self.node),
        }


node_edit = NodeEdit.as_view()
bmc_edit = BMCEdit.as_view()
interface_edit = InterfaceEdit.as_view()


def _can_delete(request, node: Node) -> bool:
    # As the API: deleting is how history would be lost, so it is the admin's.
    return can(request.user, ADMIN, node.rack.site_id if node.rack_id else None)


@login_required
@require_POST
def interface_delete(request, pk: int, nic: int):
    node = _node(request, pk)
    require(request, ADMIN, on=node)
    iface = visible_or_404(request.user, NetworkInterface, pk=nic, node=node)
    iface.delete()
    messages.success(request, f"Deleted interface {iface.mac} of {node.hostname}.")
    return redirect(node)
