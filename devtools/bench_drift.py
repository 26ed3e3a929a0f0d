"""`make bench-drift`: the drift matrix at 12,500 nodes on PostgreSQL.

Not a test. Builds a fleet of HGX nodes with ~30 compared components each (kernel, driver,
CUDA, NCCL, DCGM from the image; 17 firmware components; VBIOS per GPU x 8), 3 % of them
drifted on one component, computes every node's cells through drift.services.recompute
(the path a baseline change takes), then times, as a client sees them (median of 7):
- the fleet summary (GET /api/v1/drift/summary/),
- the first page of the matrix (GET /api/v1/drift/, 50 rows, and the /drift/ page when
  it exists),
and counts their queries at 100 nodes (a site filter) and at 12,500. Last line:
    drift nodes=… components=… cells=… recompute_nodes_per_s=… summary_ms=… page_ms=… queries=…
"""

from __future__ import annotations

import argparse
import random
import time

from devtools.benchdb import ADMIN_URL, fresh_django, timed

DB = "corral_bench_drift"
FIRMWARE = ["BMC", "BIOS", "CPLD", "PSU", "HGX_FPGA"]
FIRMWARE += [f"NVSwitch_{i}" for i in range(4)] + [f"CX7_{i}" for i in range(8)]
OS = {"kernel": "6.8.0-45-generic", "driver": "550.90.07", "cuda": "12.4", "nccl": "2.21.5"}
OS["dcgm"] = "3.3.7"
VBIOS = "96.00.89.00.01"


def build(nodes: int, drifted_share: float) -> list[int]:
    """Nodes, their deployment, facts (bulk, as many sources would have written them)."""
    from django.utils import timezone

    from drift import baselines
    from inventory.models import Fact, Node, Rack, Site
    from provisioning.models import Deployment, Image

    now = timezone.now()
    rng = random.Random(11)
    image = Image.objects.create(
        name="rocky-gpu",
        version="9.5.0",
        kernel_url="http://10.0.0.5/vmlinuz",
        initrd_url="http://10.0.0.5/initrd",
        kernel_sha256="a" * 64,
        initrd_sha256="b" * 64,
        baseline=OS,
    )
    components = {f"firmware.{c}": f"{i}.{i + 1}.0" for i, c in enumerate(FIRMWARE)}
    baselines.save(
        {
            "name": "hgx",
            "node_model": "HGX H100 8-GPU",
            "components": {**components, "gpu.vbios": VBIOS},
        },
        "bench",
    )
    small = Site.objects.create(name="small", slug="small")
    big = Site.objects.create(name="big", slug="big")
    racks = Rack.objects.bulk_create(
        [
            Rack(site=small if i < 3 else big, name=f"r{i:03d}", u_height=42)
            for i in range(nodes // 34 + 2)
        ]
    )
    rows = []
    for i in range(nodes):
        rack = racks[0] if i < 100 else racks[3 + (i - 100) // 34]
        rows.append(
            Node(
                rack=rack,
                serial=f"SN-{i:06d}",
                hostname=f"gpu{i:06d}",
                model="HGX H100 8-GPU",
                gpu_model="H100-SXM",
                gpu_count=8,
                state="in_service",
            )
        )
    created = Node.objects.bulk_create(rows, batch_size=2000)
    ids = [n.pk for n in created]
    Deployment.objects.bulk_create(
        [
            Deployment(
                node_id=pk, image=image, token_sha256=f"{pk:064x}", status="succeeded", deadline=now
            )
            for pk in ids
        ],
        batch_size=2000,
    )
    drifted = set(rng.sample(ids, int(len(ids) * drifted_share)))
    facts = []
    for pk in ids:
        values = {**OS, **components}
        vbios = [VBIOS] * 8
        if pk in drifted:
            kind = rng.choice(["firmware.BMC", "driver", "vbios"])
            if kind == "vbios":
                vbios[rng.randrange(8)] = "96.00.74.00.0B"
            else:
                values[kind] = "older"
        for key, value in values.items():
            source = "redfish" if key.startswith("firmware.") else "gate"
            facts.append(Fact(node_id=pk, key=key, value=value, source=source, observed_at=now))
        for gpu, value in enumerate(vbios):
            facts.append(
                Fact(
                    node_id=pk,
                    key="gpu.vbios",
                    gpu=gpu,
                    value=value,
                    source="gate",
                    observed_at=now,
                )
            )
    Fact.objects.bulk_create(facts, batch_size=5000)
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=12500)
    parser.add_argument("--drifted", type=float, default=0.03)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    args = parser.parse_args()

    fresh_django(DB, args.admin_url)
    from django.db import connection
    from django.test import Client
    from django.urls import NoReverseMatch, reverse

    from drift import services
    from drift.models import DriftCell, NodeDrift
    from tests.factories import user_in

    ids = build(args.nodes, args.drifted)
    started = time.monotonic()
    services.recompute(ids)
    recompute_s = time.monotonic() - started
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    cells = DriftCell.objects.count()
    drifted = NodeDrift.objects.filter(drifted_count__gt=0).count()
    client = Client()
    client.force_login(user_in("manager", "bench-manager"))
    summary_ms, summary_q = timed(client, "/api/v1/drift/summary/", {})
    _, summary_q_small = timed(client, "/api/v1/drift/summary/", {"site": "small"}, runs=1)
    api_ms, api_q = timed(client, "/api/v1/drift/", {"page_size": 50})
    _, api_q_small = timed(client, "/api/v1/drift/", {"page_size": 50, "site": "small"}, runs=1)
    print(
        f"fleet nodes={len(ids)} cells={cells} drifted_nodes={drifted} "
        f"recompute_s={recompute_s:.1f}"
    )
    print(f"api summary_ms={summary_ms:.0f} queries={summary_q} (100 nodes: {summary_q_small})")
    print(f"api page_ms={api_ms:.0f} queries={api_q} (100 nodes: {api_q_small})")
    page_ms, page_q, page_q_small = api_ms, api_q, api_q_small
    try:
        page_url = reverse("drift:matrix")
    except NoReverseMatch:
        page_url = ""
    if page_url:
        page_ms, page_q = timed(client, page_url, {})
        _, page_q_small = timed(client, page_url, {"site": "small"}, runs=1)
        print(f"html page_ms={page_ms:.0f} queries={page_q} (100 nodes: {page_q_small})")
    same = "yes" if (summary_q, page_q) == (summary_q_small, page_q_small) else "no"
    print(
        f"drift nodes={len(ids)} components={len(FIRMWARE) + len(OS) + 8} cells={cells} "
        f"recompute_nodes_per_s={len(ids) / recompute_s:.0f} summary_ms={summary_ms:.0f} "
        f"page_ms={page_ms:.0f} queries={page_q} queries_same_at_100={same}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
