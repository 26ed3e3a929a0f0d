"""Prune: what the files do not name is taken out of the fleet (`--prune`; see
fleetfile/plan.py). A node with history is decommissioned rather than deleted, as the API
does; a rack or site that still holds something is kept, saying what; baselines, images
and gate profiles are managed only when the files list that kind (an `images:` key, even
empty): a published image is deprecated (nodes may run it), a draft deleted; a gate
profile that judged a node is kept (its runs are evidence).
"""

from __future__ import annotations

from typing import Any

from inventory.choices import NodeState
from inventory.models import Node, Rack, Site
from inventory.services import deletable
from webhooks.models import WebhookSubscription

from . import baselines, forms, gates
from . import changes as p
from . import desired as d
from . import health as file_health
from . import images as file_images
from . import webhooks as file_webhooks

DECOMMISSION_FROM = (
    NodeState.ENROLLED,
    NodeState.READY,
    NodeState.DRAINED,
    NodeState.FAILED,
    NodeState.RMA,
)


def fleet(
    plan: p.Plan,
    want: d.Desired,
    sites: dict[str, Site],
    racks: dict[tuple[str, str], Rack],
    nodes: dict[str, Any],
    before: list,
    node_forms: dict[str, dict[str, Any]],
) -> None:
    leaving: set[int] = set()
    for serial, node in nodes.items():
        if serial in want.nodes or node.state == NodeState.DECOMMISSIONED:
            continue
        before.append(["node", node_forms[serial]])
        label = p.label_of("node", serial, {"hostname": node.hostname})
        if deletable(node) is None:
            plan.changes.append(p.Change("node", serial, p.DELETE, label, obj=node))
            leaving.add(node.pk)
        elif node.state in DECOMMISSION_FROM:
            plan.changes.append(p.Change("node", serial, p.DECOMMISSION, label, obj=node))
        else:
            plan.refusals.append(
                f"{node.hostname} is {node.state}: drain it before prune decommissions it"
            )
    holding = _held(leaving)
    gone_racks: set[int] = set()
    for key, rack in racks.items():
        if key in want.racks:
            continue
        if holding.get(rack.pk):
            plan.kept.append(f"rack {key[0]}/{key[1]} still holds {holding[rack.pk]}")
            continue
        before.append(["rack", forms.rack_form(rack)])
        plan.changes.append(
            p.Change("rack", key, p.DELETE, p.label_of("rack", key, None), obj=rack)
        )
        gone_racks.add(rack.pk)
    for slug, site in sites.items():
        if slug in want.sites:
            continue
        left = [
            f"{k[0]}/{k[1]}" for k, r in racks.items() if k[0] == slug and r.pk not in gone_racks
        ]
        if left:
            plan.kept.append(f"site {slug} still holds rack {', '.join(sorted(left)[:3])}")
            continue
        before.append(["site", forms.site_form(site)])
        plan.changes.append(
            p.Change("site", slug, p.DELETE, p.label_of("site", slug, None), obj=site)
        )


def baseline_list(plan: p.Plan, want: d.Desired, known: dict[str, Any], before: list) -> None:
    for name, baseline in known.items():
        if name not in want.baselines:
            before.append(["baseline", baselines.form(baseline)])
            label = p.label_of("baseline", name, None)
            plan.changes.append(p.Change("baseline", name, p.DELETE, label, obj=baseline))


def _held(leaving: set[int]) -> dict[int, str]:
    """Per rack, the nodes that stay in it after the prune (decommissioned ones included:
    their history keeps them), as a few hostnames."""
    found: dict[int, list[str]] = {}
    for rack_id, hostname in (
        Node.objects.filter(rack__isnull=False)
        .exclude(pk__in=leaving)
        .values_list("rack_id", "hostname")
        .order_by("hostname")
    ):
        found.setdefault(rack_id, []).append(hostname)
    return {k: ", ".join(v[:3]) + (", ..." if len(v) > 3 else "") for k, v in found.items()}


def image_list(plan: p.Plan, want: d.Desired, forms_now: dict[str, Any], before: list) -> None:
    for ref, image in file_images.existing().items():
        if ref in want.images:
            continue
        if image.state == "draft":
            before.append(["image", forms_now[ref]])
            plan.changes.append(p.Change("image", ref, p.DELETE, f"image {ref}", obj=image))
        elif image.state == "published":
            before.append(["image", forms_now[ref]])
            change = [p.FieldChange("state", "published", "deprecated")]
            plan.changes.append(p.Change("image", ref, p.UPDATE, f"image {ref}", change, obj=image))


def gate_profile_list(plan: p.Plan, want: d.Desired, known: dict[str, Any], before: list) -> None:
    evidence = gates.judged()
    for name, profile in known.items():
        if name in want.gate_profiles:
            continue
        if name in evidence:
            plan.kept.append(f"gate profile {name} judged nodes: its runs are evidence")
            continue
        before.append(["gate_profile", gates.form(profile)])
        label = p.label_of("gate_profile", name, None)
        plan.changes.append(p.Change("gate_profile", name, p.DELETE, label, obj=profile))


def webhook_list(plan: p.Plan, want: d.Desired, before: list) -> None:
    for sub in WebhookSubscription.objects.order_by("pk"):
        if sub.url in want.webhooks:
            continue
        before.append(["webhook", file_webhooks.form(sub)])
        label = p.label_of("webhook", sub.url, None)
        plan.changes.append(p.Change("webhook", sub.url, p.DELETE, label, obj=sub))


def health_list(
    plan: p.Plan, want: d.Desired, rules: dict[str, Any], shared: set[str], before: list
) -> None:
    for found, row in rules.items():
        if found not in want.health_rules:
            before.append(["health_rule", file_health.form(row)])
            label = p.label_of("health_rule", found, None)
            plan.changes.append(p.Change("health_rule", found, p.DELETE, label, obj=row))
    for found in sorted(shared - set(want.health_rules)):
        plan.refusals.append(file_health.shared_refusal(found))
