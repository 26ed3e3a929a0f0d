"""The schema's tags: each operation under the domain it serves, each domain described.

drf-spectacular tags an operation with the first segment of its path after the common
prefix, which for /api/v1/... is `v1`: Swagger UI showed all operations in one section and
a generated client put them all in one module. This postprocessing hook (SPECTACULAR_SETTINGS)
tags each with its domain instead and lists the domains, described, in the schema's
top-level `tags`, in the order a newcomer meets them.

A domain is found by the longest prefix of the path below the API's root: a node's drift,
health events and TPM belong to drift, health and attestation, not to nodes. A path no
prefix covers keeps its first segment as its tag, with no description;
tests/api/test_schema_tags.py fails on it, so a new resource gets a domain here.
"""

from __future__ import annotations

ROOT = "/api/v1/"

# (tag, description, path prefixes below ROOT), in the order Swagger UI shows them.
DOMAINS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "nodes",
        "Nodes and their network interfaces and facts: the inventory, the lifecycle actions "
        "(one node, or many at once) and the CSV import.",
        ("nodes/", "interfaces/"),
    ),
    (
        "sites and racks",
        "Sites, their racks, and the actions on a rack's nodes; rack templates (an NVL72's "
        "slots) and racks enrolled whole from one, with whether each is ready.",
        ("sites/", "racks/", "rack-templates/", "rack-layouts/"),
    ),
    (
        "operations",
        "What the actions started (progress, cancel) and the lifecycle events of the nodes.",
        ("operations/", "events/"),
    ),
    ("images", "OS images: drafts, publishing and deprecating.", ("images/",)),
    (
        "deployments",
        "Deployments of an image to a node, and the network-boot requests nodes made.",
        ("deployments/", "boot-requests/"),
    ),
    (
        "network",
        "Subnets, and the DHCP server configuration made from them.",
        ("subnets/", "dhcp/"),
    ),
    ("scheduling", "The Slurm configuration made from the inventory.", ("exports/",)),
    (
        "gates",
        "Acceptance gates: profiles, runs and their check results.",
        ("gate-profiles/", "gate-runs/", "check-results/"),
    ),
    (
        "attestation",
        "TPM attestations, their sign-off, and the firmware references.",
        ("attestations/", "firmware-references/", "nodes/{id}/tpm/"),
    ),
    (
        "converge",
        "Bringing nodes to their baseline: the firmware artifacts BMCs are updated from, "
        "and the one a baseline names for a component.",
        ("firmware-artifacts/", "baseline-artifacts/"),
    ),
    (
        "health",
        "Health events, the policy that acts on them, and its breaker.",
        ("health-events/", "health-policies/", "health-breaker/", "nodes/{id}/health-events/"),
    ),
    (
        "drift",
        "Baselines, what nodes were seen running, and what differs.",
        ("drift/", "baselines/", "nodes/{id}/drift/"),
    ),
    ("campaigns", "Day-2 rolling campaigns: a recycle of many nodes, paced.", ("campaigns/",)),
    ("rma", "RMA cases: the break-fix loop, its notes, parts and evidence.", ("rma-cases/",)),
    ("reports", "Managers' reports, and the GPU prices they use.", ("reports/",)),
    ("webhooks", "Webhook subscriptions and their deliveries (docs/webhooks.md).", ("webhooks/",)),
    ("audit", "The audit trail: who changed what, when (docs/audit.md).", ("audit-log/",)),
    (
        "fleet",
        "The fleet as code: plan and apply fleet files, export them, their JSON Schema, "
        "and the record of each apply (docs/fleet-as-code.md).",
        ("fleet/",),
    ),
    ("auth", "Your API token.", ("auth/",)),
)
PREFIXES = sorted(
    ((prefix, tag) for tag, _, prefixes in DOMAINS for prefix in prefixes),
    key=lambda item: -len(item[0]),
)


def domain_of(path: str) -> str:
    below = path.removeprefix(ROOT)
    return next((tag for prefix, tag in PREFIXES if below.startswith(prefix)), below.split("/")[0])


def tag_by_domain(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS)."""
    for path, item in result.get("paths", {}).items():
        for operation in item.values():
            if isinstance(operation, dict) and "tags" in operation:
                operation["tags"] = [domain_of(path)]
    result["tags"] = [{"name": tag, "description": text} for tag, text, _ in DOMAINS]
    return result
