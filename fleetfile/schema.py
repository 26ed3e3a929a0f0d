"""The fleet file's JSON Schema: the shape of each document (docs/fleet-as-code.md).

It says what a file may hold (keys, types, choices, that a secret is a reference); what a
value means against the fleet (a hostname's form, a MAC, a unit taken, a site named) is
checked by the same model rules as the API and the CSV import. The choices come from the
models, and `docs/fleet-file.schema.json` is this, written by `manage.py fleet schema
--write` and kept current by a test, so editors and pipelines can validate before a plan.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from health.choices import ESCALATIONS, Decision, Kind
from inventory.choices import AttestationPolicy, BMCProtocol, NodeRole
from webhooks.outbox import EVENT_TYPES

SCHEMA_ID = "https://corral.dev/schemas/fleet-file.schema.json"
PUBLISHED = Path(__file__).resolve().parent.parent / "docs" / "fleet-file.schema.json"
# The kinds a file may list, in the order they are applied (a rack needs its site).
KINDS = (
    "sites",
    "racks",
    "images",
    "gate_profiles",
    "nodes",
    "baselines",
    "health_policy",
    "webhooks",
)
# A reference to a secret, resolved where `apply` runs; never the secret itself.
SECRET_REFERENCE = r"^(env:[A-Za-z_][A-Za-z0-9_]*|file:/.+)$"
SECRET_KEYS = frozenset({"password", "secret"})


def _text(max_length: int, **more: Any) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_length, **more}


def _whole(minimum: int = 0, maximum: int | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        found["maximum"] = maximum
    return found


def _share(of: str) -> dict[str, Any]:
    return {
        "type": ["number", "null"],
        "minimum": 0,
        "maximum": 100,
        "description": f"Per cent of {of} the health policy and campaigns may have out of "
        "service at once; null: the fleet-wide default.",
    }


def _count(of: str) -> dict[str, Any]:
    return {
        "type": ["integer", "null"],
        "minimum": 0,
        "maximum": 32767,
        "description": f"Nodes of {of} that may always be out, whatever the share; null: the "
        "fleet-wide default.",
    }


def _object(required: list[str], properties: dict[str, Any], about: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": about,
        "required": required,
        "additionalProperties": False,
        "properties": properties,
    }


SITE = _object(
    ["slug"],
    {
        "slug": _text(50, pattern=r"^[-a-zA-Z0-9_]+$", description="The site's key."),
        "name": _text(100),
        "description": {"type": "string"},
        "attestation": {"enum": list(AttestationPolicy.values)},
        "bmc_networks": {"type": "array", "items": {"type": "string"}, "maxItems": 64},
        # Capacity limits (docs/health.md): null is the fleet-wide default.
        "rack_max_out_percent": _share("a rack's nodes"),
        "rack_min_out": _count("a rack"),
        "site_max_out_percent": _share("the site's nodes"),
        "site_min_out": _count("the site"),
    },
    "A site (a datacenter hall), named by its slug.",
)

RACK = _object(
    ["site", "name"],
    {
        "site": _text(50, description="The slug of its site."),
        "name": _text(100, description="Unique in its site."),
        "row": _text(20),
        "position": {"type": ["integer", "null"], "minimum": 0},
        "u_height": _whole(1, 60),
        "power_budget_kw": {"type": ["number", "null"], "minimum": 0, "maximum": 99999.99},
        "fabric": _text(50),
        "delivered": {
            "type": ["string", "null"],
            "description": "When the rack arrived: a date (2026-09-01) or an ISO 8601 time.",
        },
        "leaf_switches": {"type": "array", "items": {"type": "string"}},
    },
    "A rack, named by its site and name.",
)

BMC = _object(
    ["protocol", "address", "username"],
    {
        "protocol": {"enum": list(BMCProtocol.values)},
        "address": _text(255),
        "port": {"type": ["integer", "null"], "minimum": 1, "maximum": 65535},
        "username": _text(64),
        "password": {
            "type": "string",
            "pattern": SECRET_REFERENCE,
            "description": "A reference, never the password: env:NAME or file:/path, read "
            "where apply runs. Left out: the stored password is kept.",
        },
        "verify_tls": {"type": "boolean"},
        "system_id": _text(200),
        "gpu_system_id": _text(200),
    },
    "The node's BMC.",
)

INTERFACE = _object(
    ["mac"],
    {
        "mac": _text(17, description="Its key within the node."),
        "name": _text(32),
        "ip": {"type": ["string", "null"]},
        "boot": {"type": "boolean"},
        "fabric_rail": {"type": ["integer", "null"], "minimum": 0},
    },
    "A network interface of the node.",
)

NODE = _object(
    ["serial", "hostname"],
    {
        "serial": _text(100, description="The node's key."),
        "hostname": _text(63),
        "site": {
            "type": ["string", "null"],
            "maxLength": 50,
            "description": "The slug of its rack's site (with rack).",
        },
        "rack": {"type": ["string", "null"], "maxLength": 100},
        "unit": {"type": ["integer", "null"], "minimum": 1, "description": "Lowest U."},
        "u_height": _whole(1, 20),
        "model": _text(100),
        "gpu_model": _text(64),
        "gpu_count": _whole(0, 64),
        "role": {"enum": list(NodeRole.values)},
        "fabric": _text(50),
        "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "bmc": BMC,
        "interfaces": {"type": "array", "items": INTERFACE},
        "image": _text(
            127,
            pattern=r"^[^:]+:[^:]+$",
            description="The image it runs (name:version): where it runs another, or none "
            "yet, the apply starts a reimage campaign to this one.",
        ),
    },
    "A node, named by its serial. A key left out is left as it is.",
)

_URL = _text(500, description="Where the artifact is downloaded from (the egress policy's).")
_SHA256 = _text(64, pattern=r"^[0-9a-f]{64}$", description="Its sha256, 64 lower-case hex.")
LIMITS = {
    "max_unavailable_pct": _whole(1, 100),
    "pause_failed_pct": _whole(0, 100),
    "max_failures": _whole(1),
}
IMAGE = _object(
    ["name", "version"],
    {
        "name": _text(63),
        "version": _text(63, description="A string: quote 1.10 so it stays 1.10."),
        "kernel_url": _URL,
        "kernel_sha256": _SHA256,
        "initrd_url": _URL,
        "initrd_sha256": _SHA256,
        "rootfs_url": _URL,
        "rootfs_sha256": {"type": "string", "pattern": r"^([0-9a-f]{64})?$"},
        "uki_url": _URL,
        "uki_sha256": {"type": "string", "pattern": r"^([0-9a-f]{64})?$"},
        "cmdline": _text(1024),
        "baseline": {"type": "object", "description": "Expected versions (docs/drift.md)."},
        "signature": {"type": "string", "description": "Base64 ed25519 of its manifest."},
        "state": {
            "enum": ["draft", "published", "deprecated"],
            "description": "What the fleet holds: published (the default: the apply "
            "publishes it), draft or deprecated.",
        },
        "rollout": _object(
            [],
            LIMITS,
            "The limits of the reimage campaign an apply starts to move nodes to this image "
            "(docs/day2.md). Read from the files only: not exported.",
        ),
    },
    "A golden image, named by name:version; immutable once published.",
)

GATE_PROFILE = _object(
    ["name"],
    {
        "name": _text(64, pattern=r"^[-a-zA-Z0-9_]+$", description="The profile's key."),
        "spec": {
            "type": "object",
            "description": "Its phases, checks and thresholds (docs/gates.md), checked by the "
            "gates' own validator.",
        },
        "default": {
            "type": "boolean",
            "description": "The profile a gate run uses when none is named (one at most).",
        },
    },
    "A gate profile, named by its name.",
)

_VERSION = {"type": ["string", "number"], "description": "A version, or a BIOS setting's value."}
BASELINE = _object(
    ["name"],
    {
        "name": _text(100, description="The baseline's key."),
        "description": {"type": "string"},
        "node_model": _text(100, description="The nodes' model it is for; left out: any."),
        "gpu_model": _text(64, description="Their GPU model; left out: any."),
        "components": {
            "type": "object",
            "description": "Component -> the version expected (or a list: any of them), "
            "e.g. firmware.BMC: '1.45', bios.ProcTurboMode: Disabled.",
            "minProperties": 1,
            "maxProperties": 200,
            "additionalProperties": {
                "anyOf": [_VERSION, {"type": "array", "items": _VERSION, "minItems": 1}]
            },
        },
        "rollout": _object(
            [],
            {
                "converge": {
                    "type": "boolean",
                    "description": "When what this baseline expects changes, the apply "
                    "starts a converge campaign over the nodes it governs.",
                },
                **LIMITS,
            },
            "How an apply rolls a change of this baseline out to its nodes (a campaign's "
            "limits; docs/day2.md). Read from the files only: not exported.",
        ),
    },
    "What the nodes of one model (and GPU model) are expected to run, named by its name "
    "(docs/drift.md); the most specific baseline a node matches applies.",
)


HEALTH_RULE = _object(
    ["kind", "action"],
    {
        "kind": {"enum": list(Kind.values)},
        "match": {
            "type": ["string", "integer"],
            "description": 'A code (79), a class ("uncorrectable") or "*" (the default).',
        },
        "gpu_model": _text(100, description="Left out or empty: any GPU model."),
        "action": {"enum": list(Decision.values)},
        "count": {"type": ["integer", "null"], "minimum": 1, "description": "watch: how many"},
        "window_minutes": {"type": ["integer", "null"], "minimum": 1},
        "escalate_to": {"enum": ["", *(e.value for e in ESCALATIONS)]},
        "priority": _whole(0),
        "enabled": {"type": "boolean"},
        "note": {"type": "string"},
    },
    "A row of the health policy (docs/health.md), named by its kind, match and GPU model.",
)

WEBHOOK = _object(
    ["url"],
    {
        "url": _text(500, description="Where the events are POSTed: the subscription's key."),
        "events": {
            "type": "array",
            "items": {"type": "string"},  # the types known once the apps have registered them
            "minItems": 1,
            "uniqueItems": True,
        },
        "description": _text(200),
        "enabled": {"type": "boolean"},
        "secret": {
            "type": "string",
            "pattern": SECRET_REFERENCE,
            "description": "The receiver's signing secret (whsec_...) as a reference, never "
            "its value: env:NAME or file:/path. Needed to create one; left out: kept.",
        },
    },
    "A webhook subscription (docs/webhooks.md), named by its URL.",
)


def _webhook() -> dict[str, Any]:
    """WEBHOOK with the event types as they are now: each app registers the ones it sends
    when it is ready, after this module is imported."""
    events = {**WEBHOOK["properties"]["events"], "items": {"enum": list(EVENT_TYPES)}}
    return {**WEBHOOK, "properties": {**WEBHOOK["properties"], "events": events}}


def schema() -> dict[str, Any]:
    """The schema of one file of a fleet: any of the kinds, each a list."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Corral fleet file",
        "description": "One file of a fleet described as code (docs/fleet-as-code.md). "
        "A fleet may be split over any number of files.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "sites": {"type": "array", "items": SITE},
            "racks": {"type": "array", "items": RACK},
            "images": {"type": "array", "items": IMAGE},
            "gate_profiles": {"type": "array", "items": GATE_PROFILE},
            "nodes": {"type": "array", "items": NODE},
            "baselines": {"type": "array", "items": BASELINE},
            "health_policy": {"type": "array", "items": HEALTH_RULE},
            "webhooks": {"type": "array", "items": _webhook()},
        },
    }


def published_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=False) + "\n"
