"""Provisioning announces a phone-home (provisioning.signals.phoned_home) without knowing
about attestation; the TPM evidence in the report is kept here, in the same transaction."""

from __future__ import annotations

from django.dispatch import receiver

from provisioning.signals import phoned_home

from . import services


@receiver(phoned_home, dispatch_uid="corral-attestation-evidence")
def keep_evidence(sender, deployment, report: dict, **kwargs) -> None:
    services.receive_evidence(deployment, report)
