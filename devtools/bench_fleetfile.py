"""`make bench-fleetfile`: plan and apply a fleet file of a whole GB200 site.

Not a test. Writes the files of 12,500 nodes (two sites, 250 racks of 50 one-U nodes,
each with a Redfish BMC whose password is a reference, two NICs, two labels: about as an
export of a real site reads) and, on a database of its own, times the first plan (empty
fleet), the first apply, and the plan of the same files once applied (no change), as YAML
and as JSON. Last line:
    fleetfile nodes=12500 plan_s=… apply_s=… noop_plan_s=… json_noop_plan_s=… yaml_mb=…
Goals (issue 33): plan ≤ 10 s, no-op plan ≤ 10 s, first apply ≤ 60 s.
"""

from __future__ import annotations

import argparse
import json
import time

import yaml

from devtools.benchdb import fresh_django

DB = "corral_bench_fleetfile"
SITES = ("gb1", "gb2")
RACK_NODES = 50


def files(nodes: int) -> list[tuple[str, str]]:
    racks_per_site = -(-nodes // (RACK_NODES * len(SITES)))
    sites = [{"slug": s, "name": f"GB200 hall {s}", "attestation": "required"} for s in SITES]
    racks, members = [], []
    for index in range(nodes):
        site = SITES[index // (racks_per_site * RACK_NODES)]
        rack = f"r{(index // RACK_NODES) % racks_per_site:03d}"
        if index % RACK_NODES == 0:
            racks.append({"site": site, "name": rack, "u_height": 52, "power_budget_kw": 132})
        n = index + 1
        members.append(
            {
                "serial": f"GB{n:07d}",
                "hostname": f"gb-{n:05d}",
                "site": site,
                "rack": rack,
                "unit": index % RACK_NODES + 1,
                "model": "GB200 NVL72 compute tray",
                "gpu_model": "GB200",
                "gpu_count": 4,
                "labels": ["nvl72", f"pod-{index // 720}"],
                "bmc": {
                    "protocol": "redfish",
                    "address": f"https://10.{100 + n // 65536}.{n // 256 % 256}.{n % 256}",
                    "username": "admin",
                    "password": "env:BMC_PASSWORD",
                },
                "interfaces": [
                    {"mac": _mac(0x10, n), "name": "eno1", "boot": True},
                    {"mac": _mac(0x20, n), "name": "ib0", "fabric_rail": 0},
                ],
            }
        )
    dump = yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper
    return [
        ("fleet/sites.yaml", yaml.dump({"sites": sites}, Dumper=dump, sort_keys=False)),
        ("fleet/racks.yaml", yaml.dump({"racks": racks}, Dumper=dump, sort_keys=False)),
        ("fleet/nodes.yaml", yaml.dump({"nodes": members}, Dumper=dump, sort_keys=False)),
    ]


def _mac(kind: int, n: int) -> str:
    return f"0c:42:a1:{kind:02x}:{n // 256 % 256:02x}:{n % 256:02x}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=12_500)
    args = parser.parse_args()
    fresh_django(DB)
    from fleetfile import apply as applying
    from fleetfile import loading
    from fleetfile import plan as planning
    from fleetfile.secrets import Local
    from inventory.models import Node

    texts = files(args.nodes)
    size_mb = sum(len(text) for _, text in texts) / 1e6
    secrets = Local({"BMC_PASSWORD": "bench-bmc-password"})

    def plan() -> tuple[float, planning.Plan]:
        started = time.perf_counter()
        found = planning.make(loading.read_texts(texts), secrets)
        return time.perf_counter() - started, found

    plan_s, first = plan()
    started = time.perf_counter()
    applying.apply(loading.read_texts(texts), secrets, actor="user:bench", revision=first.revision)
    apply_s = time.perf_counter() - started
    assert Node.objects.count() == args.nodes
    noop_s, again = plan()
    assert not again.changes, again.text()[:2000]
    # The same files as JSON: read by the json module, not a YAML parser.
    as_json = [(n.replace(".yaml", ".json"), json.dumps(yaml.safe_load(t))) for n, t in texts]
    started = time.perf_counter()
    assert not planning.make(loading.read_texts(as_json), secrets).changes
    json_noop_s = time.perf_counter() - started
    print(f"first plan: {first.summary()}  then: {again.summary()}")
    print(
        f"fleetfile nodes={args.nodes} plan_s={plan_s:.1f} apply_s={apply_s:.1f} "
        f"noop_plan_s={noop_s:.1f} json_noop_plan_s={json_noop_s:.1f} yaml_mb={size_mb:.1f}"
    )


if __name__ == "__main__":
    main()
