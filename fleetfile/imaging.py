"""The image each node runs, as the files say it (`image: name:version` on a node): where a
node runs another image, or none yet, the apply starts a reimage campaign to it
(docs/fleet-as-code.md: Images).

What a node runs is what it last booted and phoned home with (its latest successful
deployment), or the image a recycle or deploy under way is putting on it, or the image of a
live reimage campaign it waits in (for room in its rack), so a second apply while that
work runs starts nothing more. The campaign is day2's own `reimage`: for
a node in service a recycle drains it first; a new node (enrolled) is inspected first;
then it is deployed, gated and admitted, paced by rack with the image's `rollout` limits.
A node whose image is not published yet (a draft, or one this apply publishes) waits: the
plan says so, and an apply after the publish starts its campaign.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from day2.models import CampaignNode, CampaignStatus, MemberStatus
from engine.choices import ACTIVE_OPERATION_STATUSES
from engine.models import Operation
from inventory.models import Node
from provisioning.models import Image, ImageState
from provisioning.selectors import current_image_subquery

from . import forms, rollout
from .rollout import LIMITS, SHOWN

IMAGING_KINDS = ("recycle", "deploy")


def current(nodes: dict[str, Node]) -> dict[str, str | None]:
    """By serial, the image each node runs or is being given (`name:version`). A few nodes
    are read by their ids; most of the fleet (an export, a site's files) is read whole, as
    fleetfile.forms reads it, rather than by IN lists of thousands of ids."""
    ids = {node.pk: serial for serial, node in nodes.items()}
    few = forms.few(len(ids))

    def of(rows: QuerySet, field: str = "node_id") -> QuerySet:
        return rows.filter(**{f"{field}__in": ids}) if few else rows

    running = dict(
        of(Node.objects.all(), "pk")
        .annotate(image_now=current_image_subquery())
        .values_list("pk", "image_now")
    )
    under_way = of(
        Operation.objects.filter(kind__in=IMAGING_KINDS, status__in=ACTIVE_OPERATION_STATUSES)
    )
    for node_id, params in under_way.order_by("pk").values_list("node_id", "params"):
        if params.get("image"):
            running[node_id] = params["image"]
    queued = of(
        CampaignNode.objects.filter(
            status=MemberStatus.WAITING,
            campaign__kind="reimage",
            campaign__status__in=(CampaignStatus.RUNNING, CampaignStatus.PAUSED),
        )
    )
    for node_id, image_id in queued.values_list("node_id", "campaign__image_id"):
        running[node_id] = image_id  # waiting for room in its rack
    named = {
        pk: f"{name}:{version}"
        for pk, name, version in Image.objects.filter(
            pk__in={i for i in running.values() if i}
        ).values_list("pk", "name", "version")
    }
    return {serial: named.get(running.get(pk) or 0) for pk, serial in ids.items()}


@dataclass
class Reimage:
    """A reimage campaign the apply starts: one image, the nodes the files move to it."""

    image: str
    serials: list[str]
    hostnames: list[str]
    limits: dict[str, Any] = field(default_factory=dict)
    in_service: tuple = ()  # counted as node changes already (plan._judge)

    @property
    def nodes(self) -> list[str]:
        return self.serials

    def as_api(self) -> dict[str, Any]:
        return {
            "kind": "reimage",
            "baseline": None,
            "image": self.image,
            "nodes": len(self.serials),
            "hostnames": self.hostnames[:SHOWN],
            "limits": self.limits,
            "last_failure": "",
        }

    def text(self) -> str:
        more = f", ... ({len(self.serials)} in all)" if len(self.serials) > SHOWN else ""
        return f"reimage campaign to {self.image}: {', '.join(self.hostnames[:SHOWN])}{more}"


def planned(plan: Any, known: dict[str, Image], images_in_files: dict) -> list[Reimage]:
    """The reimage campaigns an apply starts; a node whose image is not published yet is
    taken out of the plan's changes (nothing to write for it now) and listed as waiting."""
    moving: dict[str, list[Any]] = {}
    for change in plan.changes:
        if change.kind != "node" or change.wanted is None:
            continue
        wanted = change.wanted.values.get("image")
        if wanted and any(f.name == "image" for f in change.fields):
            moving.setdefault(wanted, []).append(change)
    work = []
    for ref, changes in sorted(moving.items()):
        image = known.get(ref)
        hostnames = [c.wanted.values.get("hostname") or c.key for c in changes]
        if image is None or image.state != ImageState.PUBLISHED:
            # (a deprecated one is refused at the node before: plan._deprecated_targets)
            why = "a draft" if image is not None else "created by this apply"
            plan.waits.append(
                f"{len(changes)} node(s) wait for image {ref} ({why}) to be published; "
                f"apply again once it is: {', '.join(hostnames[:SHOWN])}"
            )
            for change in changes:
                change.fields = [f for f in change.fields if f.name != "image"]
                if not change.fields and change.action == "update":
                    plan.changes.remove(change)  # only its image changed, and that waits
                    plan.unchanged += 1
            continue
        in_files = images_in_files.get(ref)
        rollout = (in_files.item.data.get("rollout") if in_files is not None else None) or {}
        limits = {k: rollout[k] for k in LIMITS if k in rollout}
        work.append(Reimage(ref, [c.key for c in changes], hostnames, limits))
    return work


def start(work: list[Reimage], actor: str, revision: str) -> list[int]:
    """The campaigns, started (their ids); inside the apply's transaction, after the
    nodes it creates are written."""
    return [
        rollout.campaign(
            f"image {w.image}",
            list(Node.objects.filter(serial__in=w.serials).values_list("pk", flat=True)),
            actor,
            revision,
            kind="reimage",
            reason=f"the fleet files move these nodes to {w.image} (plan {revision})",
            limits=w.limits,
            image_ref=w.image,
        )
        for w in work
    ]
