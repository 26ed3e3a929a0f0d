"""Health tests' fleet: a site with racks of in-service nodes, and helpers to report events
through the one service path (or the API)."""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest
from django.utils import timezone

from health import services
from tests.factories import NodeFactory, RackFactory, SiteFactory


@pytest.fixture(autouse=True)
def recycle_params_validator(monkeypatch):
    """The `recycle` action names its parameter check by path (day2.recycle.validate_params),
    and the day2 app is being written on main in parallel. Until it is merged, stand in with
    a check that passes what the policy sends ({} and {"then": "rma"}); once day2 exists
    this does nothing and the real check runs."""
    if importlib.util.find_spec("day2") is None:
        day2 = types.ModuleType("day2")
        recycle = types.ModuleType("day2.recycle")
        recycle.validate_params = dict  # type: ignore[attr-defined]
        day2.recycle = recycle  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "day2", day2)
        monkeypatch.setitem(sys.modules, "day2.recycle", recycle)


@pytest.fixture
def site(db):
    return SiteFactory(name="Hall H", slug="hallh")


def in_service_rack(site, name: str, n: int = 5):
    rack = RackFactory(site=site, name=name)
    return [NodeFactory(rack=rack, state="in_service") for _ in range(n)]


@pytest.fixture
def rack5(site):
    """Five in-service nodes in rack r01: 10 % of 5 rounds down, so the minimum (1) rules."""
    return in_service_rack(site, "r01")


def report(node, code, kind="xid", **fields):
    """One event through services.record_events, as the API and the BMC signal send it."""
    item = {"node": node, "source": "dcgm-exporter", "kind": kind, "code": str(code), **fields}
    item.setdefault("at", timezone.now())
    [event] = services.record_events([item], reported_by="token:agent")
    return event
