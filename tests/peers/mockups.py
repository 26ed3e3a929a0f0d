"""sushy-static serving more of DMTF's mockup trees, and altered copies of them.

The vendored trees (tests/fixtures/redfish-mockups/, see SOURCES.md) are never edited. A
test that needs a tree DMTF does not publish (a blade enclosure with a firmware inventory)
or a broken one (a dangling link) gets a copy in a temporary directory with the change
made by the functions below, so what differs from DMTF's tree is visible in the test code.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers.redfish import SushyStatic, run_sushy_static

MOCKUPS = Path(__file__).resolve().parents[1] / "fixtures" / "redfish-mockups"
TOWER, TOWER_SYSTEM = MOCKUPS / "public-tower", "437XR1238R2"
CXL, CXL_SYSTEM = MOCKUPS / "public-cxl", "CXL-System"
BLADED = MOCKUPS / "public-bladed"
BLADES = ["529QB9450R6", "529QB9451R6", "529QB9452R6", "529QB9453R6"]

# What a blade enclosure's BMC typically keeps: one inventory for every blade and the
# enclosure. RelatedItem says whose each component is (None: no RelatedItem at all).
BLADED_FIRMWARE: dict[str, tuple[str, list[str] | None]] = {
    "EnclosureBMC": ("2.10.1", ["/redfish/v1/Managers/MultiBladeBMC"]),
    "Midplane": ("1.0.4", ["/redfish/v1/Chassis/MultiBladeEncl"]),
    "FanController": ("0.9.7", None),
    "Blade1BIOS": ("P86 v1.58", [f"/redfish/v1/Systems/{BLADES[0]}"]),
    "Blade1BMC": ("1.45.1", ["/redfish/v1/Managers/Blade1BMC"]),
    "Blade1Storage": ("3.1", [f"/redfish/v1/Systems/{BLADES[0]}/SimpleStorage/1"]),
    "Blade2BIOS": ("P86 v1.59", [f"/redfish/v1/Systems/{BLADES[1]}"]),
    "Blade2BMC": ("1.45.2", ["/redfish/v1/Managers/Blade2BMC"]),
    "Blade2NIC": ("22.1", ["/redfish/v1/Chassis/Blade2/NetworkAdapters/1"]),
    "Blade3BIOS": ("P86 v1.57", [f"/redfish/v1/Systems/{BLADES[2]}"]),
}


def _write(tree: Path, resource: str, body: dict[str, Any]) -> None:
    target = tree / resource / "index.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(body, indent=4), encoding="utf-8")


def copy_tree(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest)
    return dest


def bladed_with_firmware(dest: Path) -> Path:
    """public-bladed plus an UpdateService whose inventory covers all four blades."""
    tree = copy_tree(BLADED, dest)
    root = json.loads((tree / "index.json").read_text(encoding="utf-8"))
    root["UpdateService"] = {"@odata.id": "/redfish/v1/UpdateService"}
    _write(tree, "", root)
    inventory = "/redfish/v1/UpdateService/FirmwareInventory"
    _write(
        tree,
        "UpdateService",
        {
            "@odata.id": "/redfish/v1/UpdateService",
            "Id": "UpdateService",
            "Name": "Update Service",
            "FirmwareInventory": {"@odata.id": inventory},
        },
    )
    _write(
        tree,
        "UpdateService/FirmwareInventory",
        {
            "@odata.id": inventory,
            "Name": "Firmware Inventory",
            "Members": [{"@odata.id": f"{inventory}/{name}"} for name in BLADED_FIRMWARE],
        },
    )
    for name, (version, related) in BLADED_FIRMWARE.items():
        body: dict[str, Any] = {
            "@odata.id": f"{inventory}/{name}",
            "Id": name,
            "Name": name,
            "Version": version,
            "Updateable": True,
        }
        if related is not None:
            body["RelatedItem"] = [{"@odata.id": p} for p in related]
        _write(tree, f"UpdateService/FirmwareInventory/{name}", body)
    return tree


def break_tree(tree: Path, changes: dict[str, dict[str, Any] | None]) -> Path:
    """Make links dangle in a copied tree: None deletes the resource (404), a dict
    replaces its body (an error body a BMC sent instead of the resource)."""
    for resource, body in changes.items():
        if body is None:
            (tree / resource / "index.json").unlink()
        else:
            _write(tree, resource, body)
    return tree


def redfish_error(message: str) -> dict[str, Any]:
    """The body a Redfish service sends for an error (DSP0266, "error" object)."""
    return {"error": {"code": "Base.1.0.GeneralError", "message": message}}


@pytest.fixture(scope="session")
def sushy_static_tower(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SushyStatic]:
    """DMTF public-tower: 8 CPUs and 2 GPUs in one Processors collection."""
    with run_sushy_static(TOWER, tmp_path_factory.mktemp("static-tower") / "log") as peer:
        peer.system_id = TOWER_SYSTEM
        yield peer


@pytest.fixture(scope="session")
def sushy_static_cxl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SushyStatic]:
    """DMTF public-cxl: a GPU on a Module chassis, linked from the system's PCIe function."""
    with run_sushy_static(CXL, tmp_path_factory.mktemp("static-cxl") / "log") as peer:
        peer.system_id = CXL_SYSTEM
        yield peer


@pytest.fixture(scope="session")
def sushy_static_bladed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SushyStatic]:
    """DMTF public-bladed (four blades behind one service) with a shared firmware inventory."""
    workdir = tmp_path_factory.mktemp("static-bladed")
    tree = bladed_with_firmware(workdir / "tree")
    with run_sushy_static(tree, workdir / "log") as peer:
        peer.system_id = BLADES[0]
        yield peer


@pytest.fixture
def sushy_static_tree(tmp_path: Path) -> Iterator[Callable[..., SushyStatic]]:
    """``start(tree, system_id)``: sushy-static on a tree of the test's own, stopped after it."""
    stack = contextlib.ExitStack()

    def start(tree: Path, system_id: str) -> SushyStatic:
        peer = stack.enter_context(run_sushy_static(tree, tmp_path / f"{tree.name}.log"))
        peer.system_id = system_id
        return peer

    with stack:
        yield start
