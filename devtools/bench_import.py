"""`make bench-import`: a CSV node import of 10,000 rows, through the path a worker takes.

Not a test. Builds a fleet file (one 1U node per unit of 42U racks, Redfish and IPMI BMCs,
a boot MAC and IP and labels per row), uploads it with import_operations.start_import as the API
and the dashboard do, with CORRAL_IMPORT_SYNC_ROWS raised so that the import runs here
rather than on a worker (the same imports.execute), on PostgreSQL. Last line:
    import rows=… seconds=… rows_per_s=… cpu_s=…
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB = "corral_bench_import"
UNITS = 42


def rack_names(rows: int) -> list[str]:
    return [f"r{i:03d}" for i in range((rows + UNITS - 1) // UNITS)]


def synthetic_csv(site: str, rows: int, bad: dict[int, dict[str, str]] | None = None) -> str:
    """`rows` valid rows in racks rack_names(rows) of `site` (42U each). `bad` replaces
    columns of some rows ({row index: {column: value}}) to make them wrong."""
    columns = [
        *("site", "rack", "rack_unit", "serial", "hostname", "model", "gpu_model"),
        *("gpu_count", "bmc_protocol", "bmc_address", "bmc_username", "bmc_password"),
        *("boot_mac", "boot_ip", "labels"),
    ]
    lines = [",".join(columns)]
    for i in range(rows):
        rack, unit = divmod(i, UNITS)
        octets = (i >> 16 & 255, i >> 8 & 255, i & 255)
        row = {
            "site": site,
            "rack": f"r{rack:03d}",
            "rack_unit": str(unit + 1),
            "serial": f"SN-BENCH-{i:06d}",
            "hostname": f"gpu{i:06d}",
            "model": "HGX H100 8-GPU",
            "gpu_model": "H100-SXM",
            "gpu_count": "8",
            "bmc_protocol": "redfish" if i % 2 else "ipmi",
            "bmc_address": ("https://" if i % 2 else "") + "10.{}.{}.{}".format(*octets),
            "bmc_username": "admin",
            "bmc_password": f"pw-{i}",
            "boot_mac": "52:54:01:{:02x}:{:02x}:{:02x}".format(*octets),
            "boot_ip": "10.200.{}.{}".format(*octets[1:]) if i < 65536 else "",
            "labels": "h100;bench",
        }
        row.update((bad or {}).get(i, {}))
        lines.append(",".join(row[c] for c in columns))
    return "\n".join(lines) + "\n"


def recreate_database(admin_url: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}"')
        conn.execute(f'CREATE DATABASE "{DB}"')
    return admin_url.rsplit("/", 1)[0] + f"/{DB}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = recreate_database(args.admin_url)
    os.environ["DJANGO_SETTINGS_MODULE"] = "fleet.settings"
    os.environ["CORRAL_ENV_FILE"] = "/nonexistent"
    os.environ["CORRAL_IMPORT_SYNC_ROWS"] = str(args.rows)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from inventory import import_operations
    from inventory.models import Node, Rack, Site

    site = Site.objects.create(name="bench", slug="bench")
    Rack.objects.bulk_create(
        [Rack(site=site, name=name, u_height=UNITS) for name in rack_names(args.rows)]
    )
    data = synthetic_csv("bench", args.rows).encode()
    started, cpu_started = time.monotonic(), time.process_time()
    op = import_operations.start_import(data, actor="bench", filename="bench.csv")
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu_started
    if op.status != "succeeded" or Node.objects.count() != args.rows:
        print(f"import failed: {op.status} {op.error[:500]}", file=sys.stderr)
        return 1
    print(f"file bytes={len(data)} racks={Rack.objects.count()}")
    # cpu_s: this process's CPU time (PostgreSQL's is not in it); steadier than seconds on
    # a shared machine.
    print(
        f"import rows={args.rows} seconds={seconds:.2f} rows_per_s={args.rows / seconds:.0f} "
        f"cpu_s={cpu:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
