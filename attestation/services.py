"""Attestation writes: the challenge a booting node gets, the evidence it returns, the
verdict (run as the gate's attestation check), and the admin's sign-offs.

The protocol (docs/attestation.md; the node side is attestation/agent/corral-attest.sh):

  1. POST /boot/attest {token, ek_public, ek_certificate, ak_public}: Corral checks the AK
     is a restricted signing key, makes a fresh nonce and a secret sealed to the EK for
     that AK (tpm2_makecredential), and answers {nonce, credential}.
  2. The node activates the credential (only its TPM can), quotes PCRs 0-9 with the
     nonce, and phones home with {attestation: {quote, signature, pcrs, eventlog, secret}}.
  3. The gate's attestation check verifies it all (attestation.verify) against the image's
     measurements and the platform's firmware reference, and keeps the evidence.
"""

from __future__ import annotations

import base64
import binascii
import logging
import secrets
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.choices import NodeState
from provisioning.bootserver import serve
from provisioning.deployments import token_hash
from provisioning.models import Deployment
from provisioning.models.deployments import DeploymentStatus

from . import tpm
from .models import Attestation, AttestationStatus, FirmwareReference, TPMIdentity

log = logging.getLogger("corral.attestation")
EVIDENCE_KEYS = ("quote", "signature", "pcrs", "eventlog", "secret")
# Far above a real event log (tens of KB) and quote (hundreds of bytes).
MAX_BLOB = 1 << 20


@dataclass
class Refused(Exception):
    """The challenge is refused: status 403 (token) or 400 (malformed evidence)."""

    status: int
    reason: str

    def __str__(self) -> str:
        return self.reason


def _b64(body: dict, key: str, required: bool = True) -> bytes:
    value = body.get(key)
    if value in (None, "") and not required:
        return b""
    if not value or not isinstance(value, str) or len(value) > MAX_BLOB * 4 // 3 + 4:
        raise Refused(400, f"{key}: give it base64-encoded (at most {MAX_BLOB} bytes)")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(400, f"{key}: not valid base64") from None


def _waiting_deployment(token: object) -> Deployment:
    if not isinstance(token, str) or not 16 <= len(token) <= 256:
        raise Refused(403, "no valid token")
    deployment = (
        Deployment.objects.select_for_update()
        .select_related("node")
        .filter(token_sha256=token_hash(token))
        .first()
    )
    if (
        deployment is None
        or deployment.status != DeploymentStatus.WAITING
        or deployment.node.state != NodeState.DEPLOYING
        or timezone.now() > deployment.deadline
    ):
        raise Refused(403, "token refused")
    return deployment


def challenge(body: dict, base_url: str) -> dict:
    """Answer a booting node's challenge request: {nonce, credential} (hex, base64).

    base_url is where the node reached Corral, as in its command line's callback URL: the
    load options it measured are re-rendered from it, to be compared with PCR 9.

    The token is checked first: a caller without one learns nothing about its key data
    and starts no tpm2 process. It is checked again, under a row lock, before writing."""
    with transaction.atomic():
        _waiting_deployment(body.get("token"))
    ek_public = _b64(body, "ek_public")
    ak_public = _b64(body, "ak_public")
    ek_certificate = _b64(body, "ek_certificate", required=False)
    try:
        tpm.read_public(ek_public, "ek_public")
        ak = tpm.read_public(ak_public, "ak_public")
    except tpm.TPMToolError as exc:
        raise Refused(400, str(exc)) from None
    if ak.attributes & tpm.AK_ATTRIBUTES != tpm.AK_ATTRIBUTES:
        raise Refused(
            400,
            "ak_public is not a restricted signing key made in the TPM "
            "(fixedTPM, fixedParent, sensitiveDataOrigin, restricted, sign)",
        )
    nonce, secret = secrets.token_bytes(16), secrets.token_bytes(16)
    try:
        credential = tpm.make_credential(ek_public, ak.name, secret)
    except tpm.TPMToolError as exc:
        raise Refused(400, f"ek_public: {exc}") from None
    with transaction.atomic():
        deployment = _waiting_deployment(body.get("token"))
        fields = {
            "node": deployment.node,
            "status": AttestationStatus.CHALLENGED,
            "nonce": nonce.hex(),
            "secret": secret.hex(),
            "ek_public": base64.b64encode(ek_public).decode(),
            "ek_certificate": base64.b64encode(ek_certificate).decode(),
            "ak_public": base64.b64encode(ak_public).decode(),
            "load_options": serve.deploy_load_options(deployment.pk, base_url),
            "challenged": timezone.now(),
        }
        # A node that retries its challenge (a lost answer) gets a new nonce; the old
        # one is void.
        Attestation.objects.update_or_create(deployment=deployment, defaults=fields)
    log.info("attestation challenge for %s", deployment.node.hostname)
    return {"nonce": nonce.hex(), "credential": base64.b64encode(credential).decode()}


def receive_evidence(deployment: Deployment, report: dict) -> None:
    """Keep the quote a phoning-home node sent (in the phone-home transaction). Judged by
    the gate; a malformed or missing part is kept as-is and fails there, with its reason."""
    raw = report.get("attestation")
    if not isinstance(raw, dict):
        return
    evidence = {k: raw[k] for k in EVIDENCE_KEYS if isinstance(raw.get(k), str)}
    evidence = {k: v for k, v in evidence.items() if len(v) <= MAX_BLOB * 4 // 3 + 4}
    now = timezone.now()
    att = Attestation.objects.select_for_update().filter(deployment=deployment).first()
    if att is None:
        Attestation.objects.create(
            node_id=deployment.node_id,
            deployment=deployment,
            status=AttestationStatus.RECEIVED,
            evidence=evidence,
            received=now,
        )
        return
    Attestation.objects.filter(pk=att.pk).update(
        status=AttestationStatus.RECEIVED, evidence=evidence, received=now
    )


def sign_off_reference(attestation: Attestation, actor: str, note: str = "") -> FirmwareReference:
    """Make this boot's firmware measurements the reference for its platform.

    Only a boot whose quote verified (signature, nonce, event log) can be signed off: its
    PCR values are then known to be what that TPM measured.
    """
    if not attestation.pcrs or not any(
        c["check"] == "event log" and c["ok"] for c in attestation.checks
    ):
        raise ValidationError(
            {"attestation": "Only a boot whose quote and event log verified can be a reference."}
        )
    platform = attestation.node.model or ""
    if not platform:
        raise ValidationError(
            {
                "attestation": f"Give {attestation.node.hostname} a model first: references "
                "are per platform (node model)."
            }
        )
    pcrs = {str(i): attestation.pcrs[str(i)] for i in (0, 2, 3, 5, 6, 7)}
    reference, _ = FirmwareReference.objects.update_or_create(
        platform=platform,
        defaults={
            "pcrs": pcrs,
            "loader": attestation.measurements.get("loader", []),
            "source": attestation,
            "signed_off_by": actor,
            "note": note,
        },
    )
    return reference


def forget_tpm(node_id: int, actor: str) -> int:
    """Accept a node's new TPM (after a board swap): its next attested boot pins it. The
    audit trail records the deleted identity and who deleted it."""
    deleted, _ = TPMIdentity.objects.filter(node_id=node_id).delete()
    log.info("TPM identity of node %s forgotten by %s", node_id, actor)
    return deleted
