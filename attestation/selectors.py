"""Attestation reads: the API's queryset, and each node's standing for lists and drift."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from .models import Attestation


def attestation_queryset() -> QuerySet[Attestation]:
    return Attestation.objects.select_related("node", "deployment__image").order_by("-id")


def latest_by_node(node_ids: Iterable[int]) -> dict[int, Attestation]:
    """Each node's most recent judged attestation (one query)."""
    rows = (
        Attestation.objects.filter(node_id__in=list(node_ids), verified__isnull=False)
        .order_by("node_id", "-verified")
        .distinct("node_id")
    )
    return {a.node_id: a for a in rows}


def for_node(node_id: int, limit: int = 5) -> list[Attestation]:
    return list(attestation_queryset().filter(node_id=node_id)[:limit])
