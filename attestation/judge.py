"""The gate's attestation check: judge the boot a node just made, keep the verdict.

validation runs this as the check of tool `tpm-quote` (no SSH: the evidence came with the
phone-home). It returns a plain Judgement; validation turns it into its Verdict, so this
app does not import the gate machinery above it.
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from inventory.choices import AttestationPolicy
from inventory.models import Node
from provisioning.models import Deployment
from provisioning.models.deployments import DeploymentStatus
from webhooks import outbox

from . import metrics, tpm
from .models import Attestation, AttestationStatus, FirmwareReference, TPMIdentity
from .verify import Evidence, Expected, Report, verify

log = logging.getLogger("corral.attestation")
TOOL = "tpm-quote"


@dataclass
class Judgement:
    status: str  # pass / degraded / fail (validation's verdict statuses)
    reason: str
    evidence: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def site_policy(node: Node) -> tuple[str, str]:
    site = node.rack.site if node.rack is not None else None
    if site is None:
        return AttestationPolicy.REQUIRED, "(no site)"
    return site.attestation, site.name


def last_boot(node: Node) -> Deployment | None:
    return (
        Deployment.objects.select_related("image")
        .filter(node=node, status=DeploymentStatus.SUCCEEDED)
        .order_by("-phoned_home", "-pk")
        .first()
    )


def trusted_cas() -> list[x509.Certificate]:
    certs: list[x509.Certificate] = []
    for path in settings.CORRAL_TPM_CA_FILES:
        try:
            certs.extend(x509.load_pem_x509_certificates(Path(path).read_bytes()))
        except (OSError, ValueError) as exc:
            why = f"CORRAL_TPM_CA_FILES: cannot read {path} ({exc})"
            raise tpm.VerifierUnavailable(why) from None
    return certs


def _decode(att: Attestation) -> Evidence:
    def blob(value: str) -> bytes:
        return base64.b64decode(value or "", validate=True)

    ev = att.evidence
    return Evidence(
        nonce=bytes.fromhex(att.nonce),
        secret=bytes.fromhex(att.secret or ""),
        ek_public=blob(att.ek_public),
        ek_certificate=blob(att.ek_certificate),
        ak_public=blob(att.ak_public),
        quote=blob(ev.get("quote", "")),
        signature=blob(ev.get("signature", "")),
        pcrs=blob(ev.get("pcrs", "")),
        eventlog=blob(ev.get("eventlog", "")),
        answered_secret=blob(ev.get("secret", "")),
        age_s=(att.received - att.challenged).total_seconds()
        if att.received and att.challenged
        else 0.0,
    )


def expected_for(node: Node, deployment: Deployment, att: Attestation) -> Expected:
    measured = deployment.image.measurements or {}
    platform = node.model or ""
    reference = FirmwareReference.objects.filter(platform=platform).first() if platform else None
    pinned = TPMIdentity.objects.filter(node=node).values_list("ek_fingerprint", flat=True)
    return Expected(
        image=str(deployment.image),
        uki=measured.get("uki_authenticode", ""),
        kernel=measured.get("kernel_authenticode", ""),
        initrd=measured.get("initrd_sha256", ""),
        load_options=att.load_options,
        platform=platform,
        firmware={int(k): v for k, v in reference.pcrs.items()} if reference else None,
        loader=list(reference.loader) if reference else [],
        pinned_ek=pinned.first() or "",
        ca_certificates=trusted_cas(),
        max_age_s=settings.CORRAL_ATTESTATION_CHALLENGE_SECONDS,
    )


def _unattested(node: Node, att: Attestation | None) -> Judgement:
    policy, site = site_policy(node)
    if att is not None and att.nonce:
        what = "the node took a challenge but sent no quote"
    else:
        what = "no TPM quote from this boot"
    if policy == AttestationPolicy.ALLOW_UNATTESTED:
        return Judgement(
            "degraded",
            f"unattested: {what} (site {site} admits unattested nodes)",
            facts={"attestation": "unattested"},
        )
    return Judgement(
        "fail",
        f"attestation failed: {what}; site {site} requires attestation",
        facts={"attestation": "failed"},
    )


def judge_node(node: Node) -> Judgement:
    deployment = last_boot(node)
    att = Attestation.objects.filter(deployment=deployment).first() if deployment else None
    if deployment is None or att is None or not att.evidence:
        return _unattested(node, att)
    try:
        evidence = _decode(att)
        report = verify(evidence, expected_for(node, deployment, att))
    except (binascii.Error, ValueError) as exc:
        return _record(node, att, False, f"attestation failed: malformed evidence ({exc})")
    except tpm.VerifierUnavailable as exc:
        # Not the node's fault: the run fails and says what to install.
        return Judgement("fail", f"attestation could not run: {exc}")
    return _record(node, att, report.ok, report.reason, report)


def _record(
    node: Node, att: Attestation, ok: bool, reason: str, report: Report | None = None
) -> Judgement:
    """Store the verdict (and what the checks found) on the attestation, pin the TPM of
    a node that passed, and announce it; one transaction."""
    now = timezone.now()
    status = AttestationStatus.PASSED if ok else AttestationStatus.FAILED
    found = {}
    if report is not None:
        found = {
            "checks": [c.as_dict() for c in report.checks],
            "pcrs": {str(k): v for k, v in report.pcrs.items()},
            "measurements": {
                "loader": report.loader,
                "applications": report.applications,
                "pcr9": report.pcr9,
                "ek_fingerprint": report.ek_fingerprint,
                "ek_issuer": report.ek_issuer,
            },
        }
    with transaction.atomic():
        Attestation.objects.filter(pk=att.pk).update(
            status=status, reason=reason, verified=now, **found
        )
        transaction.on_commit(lambda: metrics.RESULTS.labels(status).inc())
        if ok and report is not None:
            ek = report.ek_fingerprint
            identity, created = TPMIdentity.objects.get_or_create(
                node=node,
                defaults={
                    "ek_fingerprint": ek,
                    "ek_public": att.ek_public,
                    "ek_certificate": att.ek_certificate,
                    "ek_issuer": report.ek_issuer,
                },
            )
            TPMIdentity.objects.filter(pk=identity.pk).update(last_attested=now)
        outbox.emit(
            "attestation.finished",
            {
                "node": node.hostname,
                "status": status,
                "reason": reason,
                "attestation": att.pk,
                "image": str(att.deployment.image),
                "ek_fingerprint": report.ek_fingerprint if report else "",
            },
        )
    lines = [
        f"{c.name}: {'ok' if c.ok else 'FAILED'}: {c.detail}"
        for c in (report.checks if report else [])
    ]
    log.info("attestation of %s: %s", node.hostname, reason)
    return Judgement(
        "pass" if ok else "fail",
        reason,
        evidence=lines or [reason],
        facts={"attestation": status, "attestation_id": att.pk},
    )
