"""Shared pieces for the verdict tests: fixture text, parsed results, node contexts."""

from __future__ import annotations

import copy
import json
from typing import Any

from validation.parsers import parse
from validation.verdicts import DEFAULT_PROFILE, CheckSpec, NodeContext, load_profile

from ..parsers.helpers import load

PROFILE = load_profile()
DCGM_R3 = [
    "software",
    "memory",
    "pcie",
    "diagnostic",
    "memory_bandwidth",
    "targeted_stress",
    "targeted_power",
]


def parsed(tool: str, fixture: str):
    return parse(tool, load(fixture))


def node(
    gpu_model: str = "H100-SXM",
    gpu_count: int = 8,
    fabric: str = "ib-400g",
    driver: str | None = "550.54.15",
    hostname: str = "gpu-a01",
) -> NodeContext:
    expected = {"driver": driver, "cuda": "12.4"} if driver else {}
    return NodeContext(hostname, gpu_model, gpu_count, fabric, expected)


def spec(tool: str, thresholds: dict[str, Any] | None = None, **kw: Any) -> CheckSpec:
    kw.setdefault("hardware_evidence", True)
    kw.setdefault("command", "tool")
    return CheckSpec(name=kw.pop("name", tool), tool=tool, thresholds=thresholds or {}, **kw)


def dcgm_spec(**thresholds: Any) -> CheckSpec:
    return spec("dcgmi", {"required_tests": DCGM_R3, **thresholds}, command="dcgmi diag -r 3")


def profile_data() -> dict[str, Any]:
    """A fresh, mutable copy of the default profile's JSON."""
    return copy.deepcopy(json.loads(DEFAULT_PROFILE.read_text()))


def check_data(data: dict[str, Any], name: str) -> dict[str, Any]:
    for phase in data["phases"]:
        for check in phase["checks"]:
            if check["name"] == name:
                return check
    raise KeyError(name)
