"""Attestation rows for API and page tests: a verified boot's record, as the gate leaves it.

The PCR values are placeholders shaped like sha256 digests; tests that need real TPM
evidence boot a QEMU + swtpm node (tests/e2e/test_attest_boot.py).
"""

from __future__ import annotations

from attestation.models import Attestation, FirmwareReference
from tests.factories import DeploymentFactory, NodeFactory

PCRS = {str(i): f"{i:02x}" * 32 for i in range(10)}
VERIFIED = [
    {"check": "challenge", "ok": True, "detail": "nonce issued for this boot"},
    {"check": "signature", "ok": True, "detail": "signed by the AK over PCRs 0-9 (sha256)"},
    {"check": "event log", "ok": True, "detail": "40 events replay to the quoted PCRs"},
    {"check": "firmware", "ok": False, "detail": "no firmware reference for platform QEMU yet"},
]


def make_attestation(node=None, **fields) -> Attestation:
    node = node or NodeFactory(model="QEMU q35")
    defaults = {
        "status": "failed",
        "nonce": "ab" * 16,
        "reason": "attestation failed: no firmware reference for platform QEMU yet",
        "checks": VERIFIED,
        "pcrs": PCRS,
        "measurements": {"loader": ["aa" * 32, "bb" * 32]},
    }
    return Attestation.objects.create(
        node=node, deployment=DeploymentFactory(node=node), **{**defaults, **fields}
    )


def make_reference(platform: str = "QEMU q35") -> FirmwareReference:
    return FirmwareReference.objects.create(
        platform=platform,
        pcrs={k: v for k, v in PCRS.items() if k in {"0", "2", "3", "5", "6", "7"}},
        loader=["aa" * 32],
        signed_off_by="user:admin",
    )
