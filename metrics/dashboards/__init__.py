"""Corral's Grafana dashboards (docs/metrics.md, Dashboards), one per audience: operations
(the platform team), technicians (the floor), managers (capacity). They are code so that
they change with the metrics they read: tests/metrics/test_dashboards.py checks every
expression names only metrics Corral exports, and that Prometheus parses it.

`manage.py grafana_dashboards` writes them to deploy/grafana/<uid>.json, which Grafana
provisions or imports; a test fails when the checked-in files are not what this writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.cog.encoder import JSONEncoder

from . import managers, operations, technicians

BUILDERS: tuple[Callable[[], db.Dashboard], ...] = (
    operations.build,
    technicians.build,
    managers.build,
)


def folder() -> Path:
    return Path(settings.BASE_DIR) / "deploy" / "grafana"


def _as_dict(board: db.Dashboard) -> dict[str, Any]:
    model = board.build()
    # Grafana keys a panel's state (links, the panel editor, repeats) by its id; numbered
    # here, in order, so the JSON does not change from one generation to the next.
    for number, panel in enumerate(model.panels or [], start=1):
        panel.id_val = number
    data: dict[str, Any] = json.loads(JSONEncoder().encode(model))
    return data


def dashboards() -> dict[str, dict[str, Any]]:
    """{file name: the dashboard as Grafana's JSON}, named by each dashboard's uid."""
    boards = [_as_dict(build()) for build in BUILDERS]
    return {f"{board['uid']}.json": board for board in boards}


def render(board: dict[str, Any]) -> str:
    """A dashboard's file: sorted keys and a 2-space indent, so a change reads as a diff."""
    return json.dumps(board, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
