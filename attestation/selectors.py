"""Attestation reads: the API's queryset, the node panel's rows, and each node's standing
for the drift matrix and its API (one query for a page of nodes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, QuerySet, Subquery

from .models import Attestation, AttestationStatus, TPMIdentity

# Failed checks that mean the node's measurements changed (not a malformed or replayed
# quote): for a node that was attested before, that is drift.
MEASUREMENT_CHECKS = frozenset({"tpm", "event log", "image", "firmware"})


def attestation_queryset() -> QuerySet[Attestation]:
    return Attestation.objects.select_related("node", "deployment__image").order_by("-id")


def for_node(node_id: int, limit: int = 5) -> list[Attestation]:
    return list(attestation_queryset().filter(node_id=node_id)[:limit])


@dataclass(frozen=True)
class Standing:
    """How far a node can be trusted, for one cell of a list: attested, failed, changed
    (attested before, measurements differ now) or unattested."""

    status: str
    colour: str
    at: datetime | None = None
    reason: str = ""
    attestation: int | None = None

    def as_api(self) -> dict:
        return {
            "status": self.status,
            "verified": self.at.isoformat() if self.at else None,
            "reason": self.reason,
            "attestation": self.attestation,
        }


UNATTESTED = Standing("unattested", "warning")


def standings(node_ids: Iterable[int]) -> dict[int, Standing]:
    """Each node's latest judged attestation as a Standing; nodes never judged are absent
    (UNATTESTED). One query."""
    pinned = TPMIdentity.objects.filter(node_id=OuterRef("node_id"))
    # The latest judged row of each node by a correlated subquery, which SQLite (`make
    # run`) runs as PostgreSQL does; tests/embedded walks the drift pages on SQLite.
    latest = Attestation.objects.filter(
        node_id=OuterRef("node_id"), verified__isnull=False
    ).order_by("-verified", "-id")
    rows = (
        Attestation.objects.filter(node_id__in=list(node_ids), verified__isnull=False)
        .filter(pk=Subquery(latest.values("pk")[:1]))
        .annotate(pinned=Exists(pinned))
        .values("id", "node_id", "status", "reason", "verified", "checks", "pinned")
    )
    out = {}
    for row in rows:
        if row["status"] == AttestationStatus.PASSED:
            status, colour = "attested", "success"
        elif row["pinned"] and any(
            not c.get("ok") and c.get("check") in MEASUREMENT_CHECKS for c in row["checks"]
        ):
            status, colour = "changed", "danger"
        else:
            status, colour = "failed", "danger"
        out[row["node_id"]] = Standing(status, colour, row["verified"], row["reason"], row["id"])
    return out
