"""`make bench-bulk`: what a bulk action's child costs as it ends, at a site's size. Not a
test.

A bulk parent with `--children` children (13,500 by default: a GB200 site's machines),
all but the last `--ending` already ended; those end one by one in this process, each
through inventory.operations.finish_operation as a worker's task ends it (its parent's
refresh included, the parent ending with the last). Per child end: wall, this process's
CPU and PostgreSQL's (the backend serving it). Last line:
    bulk_end children=… ending=… ms_per_end=… python_ms=… pg_ms=… parent=…
"""

from __future__ import annotations

import argparse
import sys
import time

from devtools.benchdb import ADMIN_URL, fresh_django
from devtools.benchproc import process_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--children", type=int, default=13_500)
    parser.add_argument("--ending", type=int, default=300)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    args = parser.parse_args()
    fresh_django("corral_bench_bulk", args.admin_url)
    from django.db import connection

    from inventory import operations
    from inventory.models import Operation

    parent = Operation.objects.create(kind="power_on", actor="user:bench", status="running")
    ended = max(0, args.children - args.ending)
    Operation.objects.bulk_create(
        [
            Operation(kind="power_on", actor="user:bench", parent=parent, status="succeeded")
            for _ in range(ended)
        ],
        batch_size=2000,
    )
    running = Operation.objects.bulk_create(
        [
            Operation(kind="power_on", actor="user:bench", parent=parent, status="running")
            for _ in range(args.children - ended)
        ]
    )

    def pg_cpu() -> float:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        return process_cpu(pid)

    cpu, pg, wall = time.process_time(), pg_cpu(), time.perf_counter()
    for child in running:
        operations.finish_operation(child, "succeeded")
    wall, cpu, pg = time.perf_counter() - wall, time.process_time() - cpu, pg_cpu() - pg
    parent.refresh_from_db()
    n = len(running)
    print(
        f"bulk_end children={args.children} ending={n} ms_per_end={wall / n * 1000:.2f} "
        f"python_ms={cpu / n * 1000:.2f} pg_ms={pg / n * 1000:.2f} parent={parent.status}"
    )
    return 0 if parent.status == "succeeded" else 1


if __name__ == "__main__":
    sys.exit(main())
