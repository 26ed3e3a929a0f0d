"""`make bench-dash`: the managers' reports at 12,500 nodes and a year of history.

Not a test. Seeds a fleet with reports.seed.seed_history (racks delivered over the year,
bring-up, burn-in, failures, RMAs, repairs, maintenance reimages: a few million lifecycle
events), rebuilds the spans and the daily rollup from the event log, then times, as a
client sees them (median of 5, server time through Django's test client):
- every report of the API with the default window (30 days) and the heavy variants (a
  year grouped by day and by rack),
- the /dashboards/ page (KPI tiles and every chart), with its query count,
and the first (cold) rack-to-revenue, which computes what later calls remember. Last line:
    dashboards nodes=… events=… slowest_ms=… page_ms=… queries=…
"""

from __future__ import annotations

import argparse
import time

from devtools.benchdb import ADMIN_URL, fresh_django, timed

DB = "corral_bench_dash"


REPORTS = [
    ("gpu-hours", {}),
    ("gpu-hours", {"group_by": "day"}),
    ("gpu-hours", {"group_by": "rack"}),
    ("gpu-hours", {"group_by": "day", "range": "365d"}),
    ("gpu-hours", {"group_by": "rack", "range": "365d"}),
    ("gpu-hours", {"group_by": "gpu_model", "range": "365d"}),
    ("rack-to-revenue", {}),
    ("yield", {}),
    ("yield", {"range": "365d"}),
    ("reliability", {}),
    ("reliability", {"range": "365d"}),
    ("revenue", {}),
    ("revenue", {"range": "365d"}),
    ("summary", {}),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=12500)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    args = parser.parse_args()

    fresh_django(DB, args.admin_url)
    from django.db import connection
    from django.test import Client
    from django.urls import NoReverseMatch, reverse

    from inventory.models import LifecycleEvent
    from reports import services
    from reports.models import DayTotal, GpuPrice, Span
    from reports.seed import seed_history
    from tests.factories import user_in

    started = time.monotonic()
    seeded = seed_history(args.nodes, args.days, args.seed)
    seed_s = time.monotonic() - started
    started = time.monotonic()
    rebuilt = services.rebuild()
    rebuild_s = time.monotonic() - started
    for model, price in (("H100-SXM", "2.10"), ("H200-SXM", "2.60"), ("B200", "3.40")):
        GpuPrice.objects.get_or_create(gpu_model=model, defaults={"price_per_gpu_hour": price})
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    events = LifecycleEvent.objects.count()
    print(
        f"seeded nodes={args.nodes} days={args.days} events={events} "
        f"spans={Span.objects.count()} day_rows={DayTotal.objects.count()} seed_s={seed_s:.0f} "
        f"rebuild_s={rebuild_s:.0f} ({rebuilt})"
    )
    print(f"seed summary {seeded}")
    client = Client()
    client.force_login(user_in("manager", "bench-manager"))
    began = time.perf_counter()
    client.get("/api/v1/reports/rack-to-revenue/")
    print(f"rack-to-revenue cold_ms={(time.perf_counter() - began) * 1000:.0f}")
    slowest = 0.0
    for name, params in REPORTS:
        ms, queries = timed(client, f"/api/v1/reports/{name}/", params, runs=5)
        slowest = max(slowest, ms)
        shown = " ".join(f"{k}={v}" for k, v in params.items())
        print(f"report {name} {shown} ms={ms:.0f} queries={queries}")
    page_ms, page_q = 0.0, 0
    try:
        page_url = reverse("reports:dashboards")
    except NoReverseMatch:
        page_url = ""
    if page_url:
        page_ms, page_q = timed(client, page_url, {}, runs=5)
        ms_year, q_year = timed(client, page_url, {"range": "365d"}, runs=5)
        print(f"page {page_url} ms={page_ms:.0f} queries={page_q} (a year: {ms_year:.0f} ms)")
    print(
        f"dashboards nodes={args.nodes} events={events} slowest_ms={slowest:.0f} "
        f"page_ms={page_ms:.0f} queries={page_q}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
