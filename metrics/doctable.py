"""docs/metrics.md's table of metrics, written from what the apps declare (core.metrics),
so the page lists every metric a scrape can hold and nothing else."""

from __future__ import annotations

from core.doctables import between
from core.metrics import DECLARED

MARK = "<!-- metrics_table -->"


def table() -> str:
    rows = ["| metric | type | labels | kept by | meaning |", "|---|---|---|---|---|"]
    for name in sorted(DECLARED):
        m = DECLARED[name]
        labels = ", ".join(f"`{label}`" for label in m.labels) or "none"
        rows.append(f"| `{name}` | {m.type} | {labels} | {m.app} | {m.help} |")
    return "\n".join(rows) + "\n"


def refresh(page: str) -> str:
    return between(page, MARK, table())
