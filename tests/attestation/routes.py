"""The attestation API's routes beyond CRUD, for tests/api/test_contract.py's role table."""

from __future__ import annotations

from attestation.models import FirmwareReference, TPMIdentity
from tests.attestation.factories import make_attestation
from tests.factories import NodeFactory


def sign_off():
    attestation = make_attestation()
    return (
        f"/api/v1/attestations/{attestation.pk}/sign-off/",
        {"note": "reference boot, checked by hand"},
        lambda: list(FirmwareReference.objects.values_list("platform", flat=True)),
    )


def forget_tpm():
    node = NodeFactory()
    TPMIdentity.objects.create(node=node, ek_fingerprint="ab" * 32, ek_public="AAAA")
    return (
        f"/api/v1/nodes/{node.pk}/tpm/forget/",
        {},
        lambda: TPMIdentity.objects.filter(node=node).count(),
    )
