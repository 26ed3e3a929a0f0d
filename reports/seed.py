"""A synthetic fleet history for the reports: `manage.py seed_history` and the benchmark.

The dashboards turn the lifecycle event log into GPU-hours by state, yield, MTTR and
MTBF; to show them (and to measure them at 12,500 nodes) they need a year of believable
history. This module plans the fleet (sites, racks delivered over the period, nodes),
has reports.seed_sim walk every node through the real transition table, and writes the
result with reports.seed_rows (COPY on PostgreSQL, see reports.bulk): 12,500 nodes with a
year each, about 1.1 million events, take well under a minute on two cores.

Deterministic: the same `seed`, sizes and `now` give the same rows (a node's history
depends only on the seed and its index). Nothing is dated at or after `now`.

Seeded nodes are recognised by their hostname prefix (HOST_PREFIX), so a second run
refuses to write over them unless asked to replace them.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

import validation
from inventory.lifecycle import deadline_for
from inventory.models import Node, Rack, Site
from validation.models import GateProfile

from .bulk import backdated
from .seed_rows import purge, when, write_histories
from .seed_sim import DAY, GATE_FAIL_BY_GPU, GATE_FAIL_BY_VENDOR, NodeSim

HOST_PREFIX = "h-"
SERIAL_PREFIX = "HSEED"
RACK_PREFIX = "h-"
PROFILE_NAME = "seed-burn-in"
CHUNK = 500  # nodes simulated and written together: bounds memory at any fleet size
NODE_U = 4  # each node takes 4 U with a free U above it
DELIVERY_SKEW = 2.5  # delivery = start + period * random() ** skew: most racks early
VENDORS = {"Dell XE9680": 45, "Supermicro SYS-821GE-TNHR": 35, "HPE Cray XD670": 20}
# GPU generations by when in the period a rack arrived (as a fraction of it).
GPU_ERAS = (
    (0.4, {"H100-SXM": 70, "H200-SXM": 30}),
    (0.75, {"H100-SXM": 30, "H200-SXM": 50, "B200": 20}),
    (1.01, {"H200-SXM": 40, "B200": 60}),
)
# Shipped-profile checks the seed profile keeps, under the names the simulation uses.
PROFILE_CHECKS = {
    "dcgm-diag-r3": "dcgm-diag",
    "nvbandwidth-d2d": "nvbandwidth",
    "nccl-allreduce-nvlink": "nccl-allreduce",
    "gpu-burn": "gpu-burn",
}


class AlreadySeeded(Exception):
    """Seeded nodes exist and replacing them was not asked for."""

    def __init__(self, count: int) -> None:
        super().__init__(
            f"{count} seeded nodes (hostnames {HOST_PREFIX}…) already exist; "
            "use --replace to delete them and their history and seed again"
        )


@dataclass
class RackPlan:
    site: int
    name: str
    delivered: float
    vendor: str
    gpu_model: str


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def plan_racks(
    rng: random.Random, racks: int, sites: int, start: float, end: float
) -> list[RackPlan]:
    """Racks in delivery order, most of them early in the period (they have the longest
    histories); with three or more racks the last arrives in the final two days and is
    still being brought up."""
    fractions = sorted(rng.random() ** DELIVERY_SKEW for _ in range(racks))
    if racks >= 3:
        fractions[-1] = 1 - rng.uniform(0.3, 2) * DAY / (end - start)
    plans = []
    for index, fraction in enumerate(fractions):
        site = index % sites
        era = next(weights for upto, weights in GPU_ERAS if fraction < upto)
        plans.append(
            RackPlan(
                site=site,
                name=f"{RACK_PREFIX}{chr(ord('a') + site)}{index // sites + 1:03d}",
                delivered=start + max(fraction, 0.0) * (end - start),
                vendor=_pick(rng, VENDORS),
                gpu_model=_pick(rng, era),
            )
        )
    return plans


def seed_profile_spec() -> dict[str, Any]:
    """Four checks of the shipped HGX profile (validation/profiles), renamed to the
    simulation's check names, without the prose: every run stores a copy."""
    shipped_path = Path(validation.__file__).parent / "profiles" / "hgx_h100_h200.json"
    shipped = json.loads(shipped_path.read_text())
    phases = []
    for phase in shipped["phases"]:
        checks = [
            {**{k: v for k, v in c.items() if k != "notes"}, "name": PROFILE_CHECKS[c["name"]]}
            for c in phase["checks"]
            if c["name"] in PROFILE_CHECKS
        ]
        if checks:
            phases.append(
                {**{k: v for k, v in phase.items() if k != "description"}, "checks": checks}
            )
    return {
        "name": PROFILE_NAME,
        "title": "Synthetic burn-in (seed_history)",
        "version": 1,
        "gpu_models": shipped["gpu_models"],
        "fabrics": shipped["fabrics"],
        "phases": phases,
    }


def seed_profile() -> GateProfile:
    profile = GateProfile.objects.filter(name=PROFILE_NAME).first()
    if profile is None:
        profile = GateProfile(name=PROFILE_NAME, spec=seed_profile_spec())
        profile.full_clean()
        profile.save()
    return profile


def seeded_nodes() -> QuerySet[Node]:
    return Node.objects.filter(
        Q(hostname__startswith=HOST_PREFIX) | Q(serial__startswith=SERIAL_PREFIX)
    )


def _remove_previous(site_slugs: list[str]) -> None:
    purge(HOST_PREFIX)
    seeded_nodes().delete()  # a stray serial-only match, if any
    Rack.objects.filter(site__slug__in=site_slugs, name__startswith=RACK_PREFIX).delete()


def seed_history(
    nodes: int,
    days: int,
    seed: int = 0,
    per_rack: int = 8,
    now: datetime | None = None,
    *,
    replace: bool = False,
    sites: int = 3,
    maint_per_month: float = 2.0,
) -> dict[str, Any]:
    """Seed `nodes` nodes with `days` of history ending at `now` (default: this second)
    and return the summary. Raises AlreadySeeded unless `replace`; all or nothing."""
    began = time.perf_counter()
    if nodes < 1 or days < 1 or per_rack < 1 or not 1 <= sites <= 26:
        raise ValueError("nodes, days and per_rack must be >= 1, sites 1-26")
    at = (now or timezone.now()).replace(microsecond=0)
    if at > timezone.now():
        raise ValueError(f"now={at.isoformat()} is in the future")
    end = at.timestamp()
    start = end - days * DAY
    rng = random.Random(seed)
    slugs = [f"hall-{chr(ord('a') + i)}" for i in range(sites)]
    racks_plan = plan_racks(rng, math.ceil(nodes / per_rack), sites, start, end)
    counts: Counter[str] = Counter()
    states: Counter[str] = Counter()
    with transaction.atomic():
        existing = seeded_nodes().count()
        if existing and not replace:
            raise AlreadySeeded(existing)
        _remove_previous(slugs)
        site_rows = [Site.objects.get_or_create(slug=s, defaults={"name": s})[0] for s in slugs]
        profile = seed_profile()
        with backdated():
            racks = Rack.objects.bulk_create(
                [
                    Rack(
                        site=site_rows[p.site],
                        name=p.name,
                        row=f"R{(i // sites) // 20 + 1:02d}",
                        position=(i // sites) % 20 + 1,
                        power_budget_kw=Decimal("132.00"),
                        fabric="ib-400g",
                        created=when(p.delivered),
                    )
                    for i, p in enumerate(racks_plan)
                ]
            )
            fleet = _Fleet(seed, per_rack, racks, racks_plan, profile, end, maint_per_month)
            for first in range(0, nodes, CHUNK):
                chunk = _write_chunk(fleet, range(first, min(first + CHUNK, nodes)))
                counts.update(chunk["counts"])
                states.update(chunk["states"])
    return {
        "sites": len(site_rows),
        "racks": len(racks),
        "nodes": nodes,
        **dict(counts),
        "states": dict(sorted(states.items())),
        "seconds": round(time.perf_counter() - began, 1),
    }


@dataclass
class _Fleet:
    """What every chunk of nodes needs to know about the run."""

    seed: int
    per_rack: int
    racks: list[Rack]
    plans: list[RackPlan]
    profile: GateProfile
    end: float
    maint_per_month: float


def _write_chunk(fleet: _Fleet, indices: range) -> dict[str, Any]:
    """Simulate and write the nodes `indices`: node i is slot i % per_rack of rack
    i // per_rack, and draws from its own Random (seed, i)."""
    rows: list[Node] = []
    histories = []
    stacked = fleet.per_rack * (NODE_U + 1) + 1 <= 42
    for index in indices:
        rack_index, slot = divmod(index, fleet.per_rack)
        plan, rack = fleet.plans[rack_index], fleet.racks[rack_index]
        rng = random.Random(f"{fleet.seed}:{index}")
        gate_fail = GATE_FAIL_BY_GPU[plan.gpu_model] + GATE_FAIL_BY_VENDOR[plan.vendor]
        mtbf_days = rng.uniform(60, 120)
        sim = NodeSim(rng, plan.delivered, fleet.end, gate_fail, mtbf_days, fleet.maint_per_month)
        history = sim.run()
        histories.append(history)
        last = history.steps[-1] if history.steps else None
        failure = (last.src, last.reason) if last and last.dst == "failed" else ("", "")
        rows.append(
            Node(
                rack=rack,
                rack_unit=2 + slot * (NODE_U + 1) if stacked else None,
                u_height=NODE_U,
                serial=f"{SERIAL_PREFIX}{index:07d}",
                hostname=f"{HOST_PREFIX}{rack.name.removeprefix(RACK_PREFIX)}-n{slot + 1}",
                model=plan.vendor,
                gpu_model=plan.gpu_model,
                gpu_count=8,
                state=history.final,
                state_changed=when(last.at if last else plan.delivered),
                deadline=deadline_for(history.final),
                failed_step=failure[0],
                failure_reason=failure[1],
                created=when(plan.delivered),
            )
        )
    nodes = Node.objects.bulk_create(rows, batch_size=CHUNK)
    counts = write_histories(nodes, histories, fleet.profile, fleet.end)
    return {"counts": counts, "states": Counter(h.final for h in histories)}
