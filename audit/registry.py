"""What the trail records: every model people edit, and of each only the fields people set.

Machine-written fields are excluded so that a save by machinery (a power-state refresh, a
lock, an inspection's facts) that touches only them writes no entry, and the trail holds
human changes. High-volume machine tables (operations, lifecycle events, boot requests,
gate runs and check results, spans and rollups, webhook events and deliveries, worker
heartbeats, facts, drift cells) are not registered at all: they are their own record, and
an entry per row would slow the hot paths that write them.
"""

from __future__ import annotations

from typing import Any

from auditlog.registry import auditlog
from django.apps import apps

from inventory.models.nodes import OBSERVED_FIELDS

SECRET = {"mask_callable": "audit.redact.redact"}

# app_label.model -> auditlog.register() options.
TRACKED: dict[str, dict[str, Any]] = {
    "inventory.site": {"exclude_fields": ["created"]},
    # Who started a campaign, on what; its moves are in status_reason and its webhooks.
    "day2.campaign": {
        "exclude_fields": ["created", "updated", "status", "status_reason", "finished"]
    },
    "inventory.rack": {"exclude_fields": ["created"]},
    "inventory.node": {
        "exclude_fields": [
            "state",  # the lifecycle: LifecycleEvent rows say who and why
            *OBSERVED_FIELDS,  # what Corral observes or decides (inventory.models.nodes)
            "reserved_at",  # the node lock's heartbeat
            "lock_operation",
            "observed_facts",
            "observed_at",
            "created",
            "updated",
        ],
        "m2m_fields": {"labels"},
    },
    "inventory.bmc": {"mask_fields": ["password"], **SECRET},
    "inventory.networkinterface": {},
    "inventory.siterole": {},  # a role granted in one site (inventory.permissions)
    "provisioning.image": {"exclude_fields": ["created"]},
    "provisioning.subnet": {},
    "validation.gateprofile": {"exclude_fields": ["created", "updated"]},
    # Who vouched for a platform's firmware, and who accepted a node's new TPM (a deleted
    # identity); the verdicts themselves are evidence rows, like gate runs.
    "attestation.firmwarereference": {"exclude_fields": ["signed_off"]},
    "attestation.tpmidentity": {"exclude_fields": ["recorded", "last_attested"]},
    "drift.baseline": {"exclude_fields": ["updated"]},
    # Who added or removed a firmware package BMCs are flashed with; its check's outcome
    # (state, reason, size) is the machinery's.
    "converge.firmwareartifact": {"exclude_fields": ["created", "state", "reason", "size"]},
    "converge.baselineartifact": {"exclude_fields": ["created"]},
    # Who added a rack template, and which template a rack was built to; readiness is
    # the machinery's (trays.readiness).
    "trays.racktemplate": {"exclude_fields": ["created"]},
    "trays.racklayout": {"exclude_fields": ["ready", "ready_since", "first_ready", "waiting"]},
    "webhooks.webhooksubscription": {
        "mask_fields": ["secret", "url"],  # a URL may hold the receiver's credential
        "mask_callable": "audit.redact.redact_secret_or_url",
        # delivery health and the pump's lease, written by the delivery machinery
        "exclude_fields": [
            "failing",
            "failing_since",
            "first_failure_at",
            "consecutive_failures",
            "last_success_at",
            "retry_at",
            "backoff_step",
            "pump_token",
            "pump_lease_until",
            "created",
            "updated",
        ],
    },
    "reports.gpuprice": {"exclude_fields": ["updated"]},
    "rma.case": {"exclude_fields": ["updated", "evidence"]},
    "rma.part": {"exclude_fields": ["created"]},
    "health.healthpolicy": {"exclude_fields": ["updated"]},
    # Who closed the breaker is on the row; its opening is the policy's (the trail
    # records both, so "who turned automatic actions back on" is one query).
    "health.breakerstate": {},
    # Users and their roles: a role grant is a change of `groups`. The password is a hash;
    # that it changed is recorded, not the hash. A login's last_login is not a change.
    "auth.user": {
        "mask_fields": ["password"],
        **SECRET,
        "exclude_fields": ["last_login"],
        "m2m_fields": {"groups"},
    },
}


def register_all() -> None:
    for label, options in TRACKED.items():
        model = apps.get_model(label)
        if not auditlog.contains(model):
            auditlog.register(model, **{**options, "exclude_fields": _excluded(model, options)})


def _excluded(model: Any, options: dict[str, Any]) -> list[str]:
    """The options' exclusions plus every reverse relation: auditlog's create and delete
    entries list the model's get_fields(), which holds them ("events":
    "inventory.LifecycleEvent.None" on every new node) though they are no column of it."""
    reverse = [f.name for f in model._meta.get_fields() if f.auto_created and not f.concrete]
    return [*options.get("exclude_fields", []), *reverse]


def labels() -> list[str]:
    """The audited models as the API names them (`inventory.node`)."""
    return list(TRACKED)
