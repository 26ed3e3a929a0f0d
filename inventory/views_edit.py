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
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from . import services
from .forms import BMCForm, InterfaceForm, NodeForm, add_errors
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


@login_required
@require_http_methods(["GET", "POST"])
def node_edit(request, pk: int):
    node = _node(request, pk)
    require(request, WRITE, on=node)
    initial = {
        **{f: getattr(node, f) for f in services.NODE_FIELDS},
        "labels": " ".join(label.name for label in node.labels.all()),
    }
    racks = writable_racks(request.user, node.rack)
    form = NodeForm(request.POST or None, initial=initial, racks=racks)
    if request.method == "POST" and form.is_valid():
        fields = dict(form.cleaned_data)
        labels = fields.pop("labels")
        password = fields.pop("bmc_password")
        bmc = {"password": password} if password and hasattr(node, "bmc") else None
        rack = fields["rack"]
        if rack is not None and rack.pk != node.rack_id:
            require(request, WRITE, on=rack)  # a move needs the role where it lands
        elif rack is None and node.rack_id and not can(request.user, WRITE):
            raise PermissionDenied("An unracked node belongs to no site: a fleet-wide role.")
        try:
            services.update_node(node, bmc=bmc, labels=labels, **fields)
        except ValidationError as exc:
            add_errors(form, exc)
            node = _node(request, pk)  # the failed write changed nothing; show what is stored
        else:
            messages.success(request, f"Saved {node.hostname}.")
            return redirect(node)
    return render(request, "inventory/node_edit.html", {"node": node, "form": form})


@login_required
@require_http_methods(["GET", "POST"])
def bmc_edit(request, pk: int):
    """The BMC's settings. The password is write-only: never rendered, blank keeps the
    stored one, and a new destination needs it given again (BMC.check_credential)."""
    node = _node(request, pk)
    require(request, WRITE, on=node)
    bmc = BMC.objects.filter(node=node).first()
    if bmc is not None:
        initial = {f: getattr(bmc, f) for f in services.BMC_FIELDS if f != "password"}
    else:
        initial = {"protocol": "redfish", "verify_tls": True}
    form = BMCForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.update_node(node, bmc=dict(form.cleaned_data))
        except ValidationError as exc:
            add_errors(form, exc, prefix="bmc.")
            node = _node(request, pk)
        else:
            messages.success(request, f"Saved the BMC of {node.hostname}.")
            return redirect(node)
    context = {
        "node": node,
        "form": form,
        "has_password": bool(bmc and bmc.password),
        "systems": reported_systems(node),
    }
    return render(request, "inventory/bmc_edit.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def interface_edit(request, pk: int, nic: int | None = None):
    """Add (no `nic`) or edit one of the node's interfaces."""
    node = _node(request, pk)
    require(request, WRITE, on=node)
    iface = visible_or_404(request.user, NetworkInterface, pk=nic, node=node) if nic else None
    initial = {}
    if iface is not None:
        initial = {f: getattr(iface, f) for f in ("name", "mac", "ip", "boot", "fabric_rail")}
    form = InterfaceForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        target = iface or NetworkInterface(node=node)
        for key, value in form.cleaned_data.items():
            setattr(target, key, value)
        try:
            services.save_interface(target)
        except ValidationError as exc:
            add_errors(form, exc)
        else:
            messages.success(request, f"Saved interface {target.mac} of {node.hostname}.")
            return redirect(node)
    context = {"node": node, "form": form, "iface": iface, "can_delete": _can_delete(request, node)}
    return render(request, "inventory/interface_edit.html", context)


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
