"""The attestation API's viewsets for tests/api/specs.py (kept here: that file is full)."""

from __future__ import annotations

from attestation.models import Attestation, FirmwareReference
from tests.api.base import ADMINS, READERS, ViewSetSpec
from tests.attestation.factories import make_attestation, make_reference

R, D = READERS, ADMINS
ATTESTATIONS = ViewSetSpec(
    basename="attestation",
    access=(R, R, D, D, D),
    url="/api/v1/attestations/",
    model=Attestation,
    make=make_attestation,
    offers=frozenset({"list", "retrieve"}),
    list_queries=6,  # node and the deployment's image joined in
    detail_queries=5,
)
FIRMWARE_REFERENCES = ViewSetSpec(
    basename="firmware-reference",
    access=(R, R, D, D, D),
    url="/api/v1/firmware-references/",
    model=FirmwareReference,
    make=make_reference,
    offers=frozenset({"list", "retrieve", "delete"}),
    list_queries=6,
    detail_queries=5,
)
