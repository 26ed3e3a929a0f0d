"""Attestation pages: one boot's verdict with its checks and PCRs (and, for an admin, the
sign-off that makes it its platform's firmware reference); the node page panel (and the
admin's "accept a new TPM")."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from inventory.models import Node
from inventory.permissions import ADMIN, VIEW, actor_of, can
from inventory.scope import visible_or_404
from inventory.web import ScopedDetail, require

from . import selectors, services
from .models import FirmwareReference, TPMIdentity


class AttestationDetail(ScopedDetail):
    template_name = "attestation/attestation_detail.html"

    def queryset(self, request):
        return selectors.attestation_queryset()

    def context(self, request, obj):
        reference = FirmwareReference.objects.filter(platform=obj.node.model).first()
        pcrs = sorted(((int(k), v) for k, v in obj.pcrs.items()), key=lambda kv: kv[0])
        return {
            "attestation": obj,
            "reference": reference,
            "pcrs": pcrs,
            "can_sign_off": can(request.user, ADMIN),
        }


attestation_detail = AttestationDetail.as_view()


@login_required
@require_POST
def sign_off(request, pk: int):
    """Admin, fleet-wide: a reference applies to every node of the platform."""
    require(request, ADMIN, on=None)
    attestation = visible_or_404(request.user, selectors.attestation_queryset(), pk=pk)
    try:
        reference = services.sign_off_reference(
            attestation, actor_of(request.user), request.POST.get("note", "")[:2000]
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request,
            f"Firmware reference for {reference.platform} signed off. Re-run the gates of "
            f"{attestation.node.hostname} to judge this boot against it.",
        )
    return redirect("attestation:attestation_detail", pk=pk)


@login_required
def node_panel(request, pk: int):
    require(request, VIEW)
    node = visible_or_404(request.user, Node.objects.select_related("rack__site"), pk=pk)
    return render(
        request,
        "attestation/node_panel.html",
        {
            "node": node,
            "attestations": selectors.for_node(node.pk),
            "tpm": TPMIdentity.objects.filter(node=node).first(),
            "can_forget": can(request.user, ADMIN),
        },
    )


@login_required
@require_POST
def forget_tpm(request, pk: int):
    node = visible_or_404(request.user, Node.objects.select_related("rack__site"), pk=pk)
    require(request, ADMIN, on=node)
    services.forget_tpm(node.pk, actor_of(request.user))
    messages.success(
        request, f"{node.hostname}'s TPM forgotten: its next attested boot pins the new one."
    )
    return redirect(node.get_absolute_url())
