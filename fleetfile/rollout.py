"""What an apply does to machines: a baseline whose file says `rollout: {converge: true}`
starts, when what it expects changes, a converge campaign over the nodes it governs, with
the file's limits (docs/fleet-as-code.md: Baselines).

The plan lists that work (which baseline, how many nodes, the first few hostnames), so a
reviewer sees the machines an apply will touch before it does. A node is governed by a
baseline when it is the most specific one the node matches once the files are applied
(drift.services.matching, the rule drift itself uses). The campaign is day2's own
(`day2.campaigns.create`, kind `converge`): it paces the nodes by rack, drains what is in
service, and pauses on failures; it is started inside the apply's transaction, so an apply
that fails starts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from day2 import campaigns
from drift.models import Baseline
from drift.services import matching
from inventory.choices import NodeState
from inventory.models import Node

from .loading import FleetFileError, Problem

# What a change must touch to change what nodes are expected to run (not a description).
EXPECTATIONS = ("components", "node_model", "gpu_model")
LIMITS = ("max_unavailable_pct", "pause_failed_pct", "max_failures")
SHOWN = 5  # hostnames shown per campaign in a plan


@dataclass
class Work:
    baseline: str
    nodes: list[int]
    hostnames: list[str]
    in_service: list[tuple[int, str]]  # (id, hostname): what the campaign drains
    limits: dict[str, Any] = field(default_factory=dict)

    def as_api(self) -> dict[str, Any]:
        return {
            "kind": "converge",
            "baseline": self.baseline,
            "image": None,
            "nodes": len(self.nodes),
            "hostnames": self.hostnames[:SHOWN],
            "limits": self.limits,
            "last_failure": "",
        }

    def text(self) -> str:
        more = f", ... ({len(self.nodes)} in all)" if len(self.nodes) > SHOWN else ""
        return (
            f"converge campaign for baseline {self.baseline}: "
            f"{', '.join(self.hostnames[:SHOWN])}{more}"
        )


def planned(changes: list, known: dict[str, Baseline]) -> list[Work]:
    """The converge campaigns an apply of `changes` starts, one per baseline that asks for
    them and whose expectations the files change."""
    rolling = {
        c.key: c
        for c in changes
        if c.kind == "baseline"
        and c.wanted is not None
        and (c.wanted.item.data.get("rollout") or {}).get("converge")
        and (c.obj is None or any(f.name.split(".")[0] in EXPECTATIONS for f in c.fields))
    }
    if not rolling:
        return []
    after = dict(known)
    for c in changes:
        if c.kind != "baseline":
            continue
        if c.wanted is None:
            after.pop(c.key, None)  # pruned
        else:
            base = {k: getattr(c.obj, k) for k in EXPECTATIONS} if c.obj is not None else {}
            after[c.key] = Baseline(name=c.key, **{**base, **_criteria(c.wanted.values)})
    governed: dict[str, list[tuple[int, str, str]]] = {name: [] for name in rolling}
    every = list(after.values())
    nodes = (
        Node.objects.exclude(state=NodeState.DECOMMISSIONED)
        .order_by("hostname")
        .values_list("pk", "hostname", "model", "gpu_model", "state")
    )
    for pk, hostname, model, gpu_model, state in nodes:
        best = matching(every, model, gpu_model)
        if best is not None and best.name in governed:
            governed[best.name].append((pk, hostname, state))
    found = []
    for name, members in governed.items():
        if not members:
            continue
        rollout = rolling[name].wanted.item.data["rollout"]
        found.append(
            Work(
                baseline=name,
                nodes=[pk for pk, _, _ in members],
                hostnames=[h for _, h, _ in members],
                in_service=[(pk, h) for pk, h, s in members if s == NodeState.IN_SERVICE],
                limits={k: rollout[k] for k in LIMITS if k in rollout},
            )
        )
    return found


def _criteria(values: dict[str, Any]) -> dict[str, Any]:
    return {k: values[k] for k in EXPECTATIONS if k in values}


def start(work: list[Work], actor: str, revision: str) -> list[int]:
    """The campaigns, started (their ids); inside the apply's transaction."""
    return [
        campaign(
            f"baseline {w.baseline}",
            w.nodes,
            actor,
            revision,
            kind="converge",
            reason=f"baseline {w.baseline} changed by a fleet apply (plan {revision})",
            limits=w.limits,
        )
        for w in work
    ]


def campaign(
    what: str,
    nodes: list[int],
    actor: str,
    revision: str,
    *,
    kind: str,
    reason: str,
    limits: dict[str, Any],
    **more: Any,
) -> int:
    """A campaign of day2's over `nodes` for `what` the apply changed; its id. A campaign
    refused ends the apply, named: its transaction undoes everything."""
    try:
        started = campaigns.create(
            name=f"fleet apply {revision}: {what}"[:100],
            selection={"nodes": nodes},
            actor=actor,
            kind=kind,
            reason=reason,
            **limits,
            **more,
        )
    except ValidationError as exc:
        why = "; ".join(exc.messages)
        raise FleetFileError([Problem("", None, what, f"no {kind} campaign: {why}")]) from None
    return started.pk
