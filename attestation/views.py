"""Attestation pages: one boot's verdict with its checks and PCRs; the node page panel."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from inventory.models import Node

from . import selectors
from .models import FirmwareReference, TPMIdentity


@login_required
def attestation_detail(request, pk: int):
    attestation = get_object_or_404(selectors.attestation_queryset(), pk=pk)
    reference = FirmwareReference.objects.filter(platform=attestation.node.model).first()
    pcrs = sorted(((int(k), v) for k, v in attestation.pcrs.items()), key=lambda kv: kv[0])
    return render(
        request,
        "attestation/attestation_detail.html",
        {"attestation": attestation, "reference": reference, "pcrs": pcrs},
    )


@login_required
def node_panel(request, pk: int):
    node = get_object_or_404(Node.objects.select_related("rack__site"), pk=pk)
    return render(
        request,
        "attestation/node_panel.html",
        {
            "node": node,
            "attestations": selectors.for_node(node.pk),
            "tpm": TPMIdentity.objects.filter(node=node).first(),
        },
    )
