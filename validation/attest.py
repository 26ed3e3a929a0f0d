"""Attestation as a phase of the gate: shown in the same panel and API as every check.

A profile may place a `tpm-quote` check where it likes. If it has none, Corral puts an
`attestation` phase first whenever the node's site requires attestation or the boot being
judged carried a TPM quote (a quote that does not verify must fail the node even where
unattested nodes are allowed). The check runs here, without SSH: the evidence came with
the phone-home (attestation.judge).
"""

from __future__ import annotations

import copy
from typing import Any

from attestation import judge as attestation
from attestation.models import Attestation
from inventory.choices import AttestationPolicy
from inventory.models import Node

from .verdicts.judges_trust import TPM_QUOTE
from .verdicts.model import CheckSpec, Verdict

LOCAL_TOOLS = frozenset({TPM_QUOTE})
PHASE: dict[str, Any] = {
    "name": "attestation",
    "description": "The boot's TPM quote: signed by this node's TPM, fresh, and measuring "
    "the image's kernel and initrd and the platform's reference firmware.",
    "checks": [
        {
            "name": "tpm-quote",
            "tool": TPM_QUOTE,
            "command": "corral: verify this boot's TPM quote and event log",
            "timeout_s": 60,
            "required": True,
        }
    ],
}


def _has_check(spec: dict) -> bool:
    return any(
        c.get("tool") == TPM_QUOTE for p in spec.get("phases", []) for c in p.get("checks", [])
    )


def needed(node: Node) -> bool:
    policy, _ = attestation.site_policy(node)
    if policy == AttestationPolicy.REQUIRED:
        return True
    boot = attestation.last_boot(node)
    return bool(boot and Attestation.objects.filter(deployment=boot).exclude(evidence={}).exists())


def with_attestation(spec: dict, node: Node) -> dict:
    """The spec a run uses: the profile, with the attestation phase first if needed."""
    if _has_check(spec) or not needed(node):
        return spec
    spec = copy.deepcopy(spec)
    spec["phases"] = [copy.deepcopy(PHASE), *spec.get("phases", [])]
    return spec


def run_check(check: CheckSpec, node: Node) -> Verdict:
    judged = attestation.judge_node(node)
    return Verdict(
        status=judged.status,
        reason=judged.reason,
        evidence=judged.evidence,
        facts=judged.facts,
        check=check.name,
        required=check.required,
    )
