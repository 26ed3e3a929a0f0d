"""Database plumbing for the in-process benchmarks (gates, drift, dashboards): a fresh
PostgreSQL database of their own, Django set up on it, and a timed GET."""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"


def fresh_django(name: str, admin_url: str = ADMIN_URL) -> None:
    """Drop and create database `name`, point Django at it (no .env) and migrate."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = admin_url.rsplit("/", 1)[0] + f"/{name}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "fleet.settings"
    os.environ["CORRAL_ENV_FILE"] = "/nonexistent"
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def timed(client, url: str, params: dict, runs: int = 7) -> tuple[float, int]:
    """Median milliseconds of GET url and the query count of one GET."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        resp = client.get(url, params)
        times.append((time.perf_counter() - started) * 1000)
        assert resp.status_code == 200, (url, params, resp.status_code, resp.content[:300])
    with CaptureQueriesContext(connection) as queries:
        client.get(url, params)
    return statistics.median(times), len(queries)
